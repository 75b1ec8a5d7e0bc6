import { closest, didYouMean } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { Action, StepNode } from './ast.js';
import type { Diagnostics } from './diagnostics.js';
import { attrLoc, ElementReader } from './element-reader.js';
import { readAction } from './read-action.js';
import { readCompensate, readControl } from './read-control.js';
import { elementsOf, serializeChildren, textOf, type XmlElement } from './xml-element.js';

const ACTION_TAGS = ['execute', 'foreach', 'render', 'instruction', 'wait'] as const;
const CONTROL_TAGS = [
  'condition',
  'any',
  'all',
  'not',
  'assign',
  'retry',
  'timeout',
  'next',
  'lock',
  'rate_limit',
  'compensate',
] as const;
/** RYE's documentary elements inside steps: kept, never executed. */
const DOC_TAGS = [
  'tool',
  'parameters',
  'description',
  'tool_call',
  'rule',
  'search',
  'load',
  'sign',
  'success_criteria',
  'criterion',
  'template',
  'example',
  'raw',
  'note',
];
const KNOWN_TAGS = [...ACTION_TAGS, ...CONTROL_TAGS];

/** Step and node names become state ids: letters, digits, `_` and `-`. */
export const NODE_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** Reads `<step>`. Returns undefined when the step is too broken to keep. */
export function readStep(el: XmlElement, diag: Diagnostics): StepNode | undefined {
  const attrs = new ElementReader(el, diag, ['name', 'on_error', 'condition'], ['name']);
  const name = checkName(el, diag);
  if (el.attrs.condition !== undefined) {
    diag.warn(
      'PROSE_CONDITION',
      `Step "${name}" has a natural-language condition attribute; Dirigent does not evaluate it.`,
      el.loc,
      'Write the condition as <condition path="…" op="…" value="…"/> to have it enforced.',
    );
  }
  const kids = elementsOf(el);
  // Asked only of steps that are not one action among control elements, the common case.
  const hasProse = () =>
    el.children.some((c) => typeof c === 'string' && c.trim() !== '') ||
    kids.some((k) => DOC_TAGS.includes(k.tag));
  const actions: XmlElement[] = [];
  const control = readControl(el, name, diag);
  for (const kid of kids) {
    if ((ACTION_TAGS as readonly string[]).includes(kid.tag)) actions.push(kid);
    else if ((CONTROL_TAGS as readonly string[]).includes(kid.tag) || DOC_TAGS.includes(kid.tag))
      continue;
    else if (closest(kid.tag, KNOWN_TAGS) !== undefined || !hasProse()) {
      diag.error(
        ErrorCode.UNKNOWN_ELEMENT,
        `Step "${name}" has an unknown element <${kid.tag}>.${didYouMean(kid.tag, KNOWN_TAGS)}`,
        kid.loc,
        `A step holds one action (${ACTION_TAGS.join(', ')}) and optionally ${CONTROL_TAGS.join(', ')}.`,
      );
    }
  }
  let action: Action | undefined;
  // RYE's `<render>` + `<instruction>` pairs tell an agent what to show and do: one instruction.
  const forAgent =
    actions.length > 1 && actions.every((a) => a.tag === 'render' || a.tag === 'instruction');
  if (actions.length === 1) action = readAction(actions[0]!, name, diag);
  else if (actions.length === 0 || forAgent || hasProse()) {
    if (actions.length > 1) {
      diag.warn(
        'PROSE_STEP',
        `Step "${name}" holds ${actions.length} actions (${actions.map((a) => `<${a.tag}>`).join(', ')})${hasProse() ? ' among prose' : ''}; it becomes an instruction step.`,
        el.loc,
        'Split it into one step per action to have Dirigent run them.',
      );
    }
    action = {
      type: 'instruction',
      text: serializeChildren(el.children).trim(),
      signal: name,
      timeoutMs: undefined,
      loc: el.loc,
    };
  } else {
    diag.error(
      ErrorCode.STEP_ACTION,
      `Step "${name}" holds ${actions.length} actions (${actions.map((a) => `<${a.tag}>`).join(', ')}); a step holds exactly one.`,
      actions[1]!.loc,
      'Split it into several steps.',
    );
  }
  const compensate = readCompensate(el, name, action, diag);
  if (action === undefined) return undefined;
  const onError = attrs.str('on_error');
  return {
    kind: 'step',
    name,
    loc: el.loc,
    action,
    onError,
    ...(onError !== undefined && { onErrorLoc: attrLoc(el, 'on_error') }),
    description: descriptionOf(el),
    ...control,
    ...(compensate !== undefined && { compensate }),
  };
}

/** The checked `name` attribute of a step, parallel or branch. */
export function checkName(el: XmlElement, diag: Diagnostics): string {
  const name = el.attrs.name ?? '';
  if (name !== '' && !NODE_NAME.test(name)) {
    diag.error(
      ErrorCode.INVALID_NAME,
      `<${el.tag} name="${name}">: "${name}" is not a valid name; names use letters, digits, "_" and "-", and start with a letter or "_".`,
      attrLoc(el, 'name'),
      `Write it as name="${name.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^(?=[^A-Za-z_])/, '_')}".`,
    );
  }
  return name;
}

function descriptionOf(el: XmlElement): string | undefined {
  const d = elementsOf(el).find((k) => k.tag === 'description');
  return d === undefined ? undefined : textOf(d);
}
