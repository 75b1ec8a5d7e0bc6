/**
 * What starts a directive besides a caller (DIRECTIVES.md, "Concurrency, schedules and events"):
 * `<schedule cron timezone name>` with `<input name>value</input>`s, and `<on event>`, in its
 * `<metadata>`. Read here with located errors; registered by the workers (schedules) and matched
 * by `emit` (events).
 */
import type * as CronParser from 'cron-parser';
import { ErrorCode } from '../errors/error-codes.js';
import type { Diagnostics } from './diagnostics.js';
import type { EventDecl, ScheduleDecl } from './trigger-decl.js';
import { attrLoc, ElementReader } from './element-reader.js';
import { elementsOf, textOf, type XmlElement } from './xml-element.js';
import { lazyPackage } from '../lazy-package.js';

/** cron-parser (and luxon under it), loaded by the first `<schedule>` read. */
const cronParser = lazyPackage<typeof CronParser>('cron-parser');

/** What an event name may be: dotted words, as `order.created`. */
export const EVENT_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$/;

/** Reads one `<schedule>`; `index` is its position among the directive's schedules (from 1). */
export function readSchedule(
  el: XmlElement,
  index: number,
  diag: Diagnostics,
): ScheduleDecl | undefined {
  const r = new ElementReader(el, diag, ['cron', 'timezone', 'name'], ['cron']);
  const cron = r.str('cron')?.trim();
  const timezone = r.str('timezone')?.trim() || undefined;
  if (cron === undefined || cron === '') return undefined;
  const problem = cronProblem(cron, timezone);
  if (problem !== undefined)
    diag.error(
      ErrorCode.INVALID_ATTRIBUTE,
      problem.message,
      attrLoc(el, problem.attribute),
      problem.hint,
    );
  const inputs: Record<string, string> = {};
  for (const kid of elementsOf(el)) {
    const name = kid.attrs.name;
    if (kid.tag !== 'input' || name === undefined) {
      diag.error(
        ErrorCode.UNKNOWN_ELEMENT,
        `<schedule> holds <input name="…">value</input> elements, not <${kid.tag}${name === undefined && kid.tag === 'input' ? '> without a name' : '>'}.`,
        kid.loc,
        'Give each input of the scheduled runs as <input name="report">daily</input>.',
      );
      continue;
    }
    inputs[name] = kid.attrs.value ?? textOf(kid);
  }
  return { name: r.str('name')?.trim() || String(index), cron, timezone, inputs, loc: el.loc };
}

/** Reads one `<on event="…"/>`. */
export function readOn(el: XmlElement, diag: Diagnostics): EventDecl | undefined {
  const r = new ElementReader(el, diag, ['event'], ['event']);
  const event = r.str('event')?.trim();
  if (event === undefined || event === '') return undefined;
  if (!EVENT_NAME.test(event)) {
    diag.error(
      ErrorCode.INVALID_ATTRIBUTE,
      `<on event="${event}"> is not an event name.`,
      attrLoc(el, 'event'),
      'Event names are letters, digits and . _ : - (order.created), up to 128 characters.',
    );
    return undefined;
  }
  return { event, loc: el.loc };
}

/** What is wrong with a cron expression and time zone (as `<schedule>` takes them), if anything. */
export function cronProblem(
  cron: string,
  timezone: string | undefined,
): { attribute: 'cron' | 'timezone'; message: string; hint: string } | undefined {
  if (timezone !== undefined && !isTimeZone(timezone))
    return {
      attribute: 'timezone',
      message: `"${timezone}" is not a time zone.`,
      hint: 'Write an IANA time zone such as Europe/Berlin or America/New_York (default UTC).',
    };
  try {
    cronParser().CronExpressionParser.parse(cron, timezone === undefined ? {} : { tz: timezone });
    return undefined;
  } catch (err) {
    return {
      attribute: 'cron',
      message: `"${cron}" is not a cron expression: ${(err as Error).message}.`,
      hint: 'Write five fields (minute hour day month weekday), e.g. "0 3 * * *" for 03:00 every day.',
    };
  }
}

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
