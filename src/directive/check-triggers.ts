import { didYouMean } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { Directive } from './ast.js';
import { coerceValue } from './coerce-value.js';
import type { Diagnostics } from './diagnostics.js';

/**
 * A schedule's inputs must be the directive's, of their types, and complete (a scheduled run has
 * no one to ask); a directive that runs on events takes the payload as its input `event`.
 */
export function checkTriggers(d: Directive, diag: Diagnostics): void {
  const byName = new Map(d.inputs.map((i) => [i.name, i]));
  const names = new Set<string>();
  for (const s of d.schedules) {
    if (names.has(s.name))
      diag.error(
        ErrorCode.INVALID_ATTRIBUTE,
        `Two <schedule>s are named "${s.name}".`,
        s.loc,
        'Give each schedule of a directive its own name="…".',
      );
    names.add(s.name);
    for (const [name, raw] of Object.entries(s.inputs)) {
      const decl = byName.get(name);
      if (decl === undefined)
        diag.error(
          ErrorCode.INVALID_INPUTS,
          `<schedule> gives input "${name}", which the directive does not declare.${didYouMean(name, [...byName.keys()])}`,
          s.loc,
          `Declared inputs: ${[...byName.keys()].join(', ') || 'none'}.`,
        );
      else if (!coerceValue(raw, decl.type).ok)
        diag.error(
          ErrorCode.INVALID_INPUTS,
          `<schedule> gives input "${name}" the value "${raw}", which is not ${decl.type === 'integer' || decl.type === 'array' || decl.type === 'object' ? 'an' : 'a'} ${decl.type}.`,
          s.loc,
          "Write a value of the input's type (JSON for arrays and objects).",
        );
    }
    for (const i of d.inputs)
      if (i.required && !i.hasDefault && !(i.name in s.inputs))
        diag.error(
          ErrorCode.INVALID_INPUTS,
          `<schedule> does not give required input "${i.name}", and a scheduled run has no one to ask.`,
          s.loc,
          `Add <input name="${i.name}">…</input> to the schedule, or give the input a default.`,
        );
  }
  if (d.events.length > 0 && byName.get('event')?.type !== 'object')
    diag.error(
      ErrorCode.INVALID_INPUTS,
      `A directive that runs on events (<on event="${d.events[0]!.event}">) takes the event's payload as its input "event", which it does not declare as an object.`,
      d.events[0]!.loc,
      'Declare <input name="event" type="object">the event\'s payload</input>.',
    );
}
