import { closest, didYouMean } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import type {
  Action,
  Assign,
  Condition,
  Edge,
  ExecuteAction,
  ParamSpec,
  RetryPolicy,
  StepNode,
} from './ast.js';
import type { Diagnostics } from './diagnostics.js';
import { attrLoc, ElementReader } from './element-reader.js';
import { CONDITION_TAGS, readCondition, readConditionHost } from './read-condition.js';
import { readValue, templateOrLiteral } from './read-value.js';
import { elementsOf, serializeChildren, textOf, type XmlElement } from './xml-tree.js';

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
  const hasProse =
    el.children.some((c) => typeof c === 'string' && c.trim() !== '') ||
    kids.some((k) => DOC_TAGS.includes(k.tag));
  const actions: XmlElement[] = [];
  const control = readControl(el, name, diag);
  for (const kid of kids) {
    if ((ACTION_TAGS as readonly string[]).includes(kid.tag)) actions.push(kid);
    else if ((CONTROL_TAGS as readonly string[]).includes(kid.tag) || DOC_TAGS.includes(kid.tag))
      continue;
    else if (closest(kid.tag, KNOWN_TAGS) !== undefined || !hasProse) {
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
  else if (actions.length === 0 || hasProse || forAgent) {
    if (actions.length > 1) {
      diag.warn(
        'PROSE_STEP',
        `Step "${name}" holds ${actions.length} actions (${actions.map((a) => `<${a.tag}>`).join(', ')})${hasProse ? ' among prose' : ''}; it becomes an instruction step.`,
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

/** The control elements shared by steps and parallel blocks. */
export interface Control {
  condition: Condition | undefined;
  assigns: Assign[];
  retry: RetryPolicy | undefined;
  timeoutMs: number | undefined;
  next: Edge[] | undefined;
}

/** Reads `<condition>`/`<any>`/`<all>`/`<not>`, `<assign>`, `<retry>`, `<timeout>` and `<next>`. */
export function readControl(el: XmlElement, name: string, diag: Diagnostics): Control {
  const out: Control = {
    condition: undefined,
    assigns: [],
    retry: undefined,
    timeoutMs: undefined,
    next: undefined,
  };
  for (const kid of elementsOf(el)) {
    if ((CONDITION_TAGS as readonly string[]).includes(kid.tag)) {
      if (out.condition !== undefined)
        diag.error(
          ErrorCode.INVALID_CONDITION,
          `Step "${name}" has more than one condition.`,
          kid.loc,
          'Combine them in one <all> (every one must hold) or <any> (one must hold).',
        );
      out.condition = readCondition(kid, diag);
    } else if (kid.tag === 'assign') {
      new ElementReader(kid, diag, ['name', 'value', 'expr', 'type'], ['name']);
      const value = readValue(kid, diag, true);
      if (value === undefined)
        diag.error(
          ErrorCode.MISSING_ATTRIBUTE,
          `<assign name="${kid.attrs.name ?? ''}"> needs a "value" or "expr".`,
          kid.loc,
          'Write value="${result.…}" (a template or text) or expr="…" (a JSONata expression).',
        );
      else out.assigns.push({ name: kid.attrs.name ?? '', value, loc: kid.loc });
    } else if (kid.tag === 'retry') {
      const r = new ElementReader(
        kid,
        diag,
        ['attempts', 'backoff', 'delay_ms', 'max_delay_ms'],
        ['attempts'],
      );
      out.retry = {
        attempts: r.int('attempts', 1) ?? 1,
        backoff: r.oneOf('backoff', ['fixed', 'exponential'] as const, 'exponential'),
        delayMs: r.int('delay_ms', 0) ?? 1000,
        maxDelayMs: r.int('max_delay_ms', 0) ?? 30_000,
      };
    } else if (kid.tag === 'timeout') {
      const seconds = new ElementReader(kid, diag, ['seconds'], ['seconds']).num('seconds');
      if (seconds !== undefined) out.timeoutMs = Math.round(seconds * 1000);
    } else if (kid.tag === 'next') {
      out.next = readNext(kid, diag);
    }
  }
  return out;
}

function readNext(el: XmlElement, diag: Diagnostics): Edge[] {
  new ElementReader(el, diag, ['to']);
  if (el.attrs.to !== undefined) {
    if (el.attrs.to.trim() === '') {
      diag.error(
        ErrorCode.MISSING_ATTRIBUTE,
        '<next to=""> names no step.',
        attrLoc(el, 'to'),
        'Write the name of the step to go to, or to="$end" to complete the run.',
      );
      return [];
    }
    return [{ when: undefined, to: el.attrs.to, loc: el.loc }];
  }
  const edges: Edge[] = [];
  let reported = false;
  for (const kid of elementsOf(el)) {
    if (kid.tag === 'when') {
      const when = readConditionHost(kid, diag, ['to']);
      if (kid.attrs.to === undefined || kid.attrs.to.trim() === '') {
        diag.error(
          ErrorCode.MISSING_ATTRIBUTE,
          `<when> needs a "to" attribute: the step to go to when its condition holds.`,
          kid.loc,
          'Write <when path="…" op="…" value="…" to="step_name"/>, or to="$end" to complete the run.',
        );
        reported = true;
        continue;
      }
      if (when === undefined) {
        reported = true;
        continue;
      }
      edges.push({ when, to: kid.attrs.to, loc: kid.loc });
    } else if (kid.tag === 'otherwise') {
      new ElementReader(kid, diag, ['to'], ['to']);
      if (kid.attrs.to === undefined || kid.attrs.to.trim() === '') {
        reported = true;
        continue;
      }
      edges.push({ when: undefined, to: kid.attrs.to, loc: kid.loc });
    } else {
      diag.error(
        ErrorCode.UNKNOWN_ELEMENT,
        `<next> holds <when> and <otherwise>, not <${kid.tag}>.${didYouMean(kid.tag, ['when', 'otherwise'])}`,
        kid.loc,
      );
      reported = true;
    }
  }
  if (edges.length === 0 && !reported) {
    diag.error(
      ErrorCode.MISSING_ATTRIBUTE,
      '<next> needs a "to" attribute or <when>/<otherwise> children.',
      el.loc,
      'Write <next to="step_name"/>, or <next><when … to="…"/><otherwise to="…"/></next>.',
    );
  }
  return edges;
}

function readAction(el: XmlElement, step: string, diag: Diagnostics): Action | undefined {
  switch (el.tag) {
    case 'execute':
      return readExecute(el, diag);
    case 'foreach': {
      const r = new ElementReader(el, diag, [
        'over',
        'expr',
        'as',
        'parallel',
        'collect',
        'on_failure',
      ]);
      const over =
        el.attrs.expr !== undefined
          ? { kind: 'expr' as const, source: el.attrs.expr }
          : el.attrs.over !== undefined
            ? templateOrLiteral(el.attrs.over)
            : undefined;
      if (over === undefined)
        diag.error(
          ErrorCode.MISSING_ATTRIBUTE,
          '<foreach> needs an "over" (or "expr") attribute.',
          el.loc,
          'Example: <foreach over="${inputs.files}" as="file">.',
        );
      const inner = elementsOf(el);
      const exec = inner.filter((k) => k.tag === 'execute');
      for (const k of inner) {
        if (k.tag !== 'execute')
          diag.error(
            ErrorCode.UNKNOWN_ELEMENT,
            `<foreach> holds one <execute>, not <${k.tag}>.${didYouMean(k.tag, ['execute'])}`,
            k.loc,
          );
      }
      if (exec.length !== 1) {
        diag.error(
          ErrorCode.STEP_ACTION,
          `<foreach> in step "${step}" holds ${exec.length === 0 ? 'no' : exec.length} <execute> elements; it must hold exactly one: the work done for each item.`,
          exec.length === 0 ? el.loc : exec[1]!.loc,
          'Example: <foreach over="${inputs.files}" as="file"><execute item_type="tool" item_id="…"><param name="path" value="${file}"/></execute></foreach>.',
        );
        return undefined;
      }
      const execute = readExecute(exec[0]!, diag);
      if (over === undefined || execute === undefined) return undefined;
      return {
        type: 'foreach',
        over,
        as: r.str('as') ?? 'item',
        parallel: r.int('parallel', 1) ?? 1,
        collect: r.str('collect'),
        onFailure: r.oneOf('on_failure', ['fail_fast', 'continue'] as const, 'fail_fast'),
        execute,
        loc: el.loc,
      };
    }
    case 'render':
      new ElementReader(el, diag, []);
      return { type: 'render', template: serializeChildren(el.children).trim(), loc: el.loc };
    case 'instruction': {
      const seconds = new ElementReader(el, diag, ['timeout_seconds']).num('timeout_seconds');
      const text = serializeChildren(el.children).trim();
      return { type: 'instruction', text, signal: step, timeoutMs: toMs(seconds), loc: el.loc };
    }
    case 'wait': {
      const r = new ElementReader(el, diag, ['signal', 'timeout_seconds']);
      return {
        type: 'wait',
        signal: r.str('signal') ?? step,
        timeoutMs: toMs(r.num('timeout_seconds')),
        loc: el.loc,
      };
    }
    default:
      return undefined;
  }
}

function toMs(seconds: number | undefined): number | undefined {
  return seconds === undefined ? undefined : Math.round(seconds * 1000);
}

/** Reads `<execute item_type item_id>` and its `<param>` children. */
export function readExecute(el: XmlElement, diag: Diagnostics): ExecuteAction | undefined {
  const r = new ElementReader(el, diag, ['item_type', 'item_id'], ['item_id']);
  const itemType = r.oneOf('item_type', ['tool', 'directive'] as const, 'tool');
  const params: ParamSpec[] = [];
  for (const kid of elementsOf(el)) {
    if (kid.tag !== 'param') {
      diag.error(
        ErrorCode.UNKNOWN_ELEMENT,
        `<execute> holds <param> elements, not <${kid.tag}>.${didYouMean(kid.tag, ['param'])}`,
        kid.loc,
        'Pass each parameter as <param name="…" value="…"/>.',
      );
      continue;
    }
    new ElementReader(kid, diag, ['name', 'value', 'expr', 'type'], ['name']);
    const name = kid.attrs.name ?? '';
    const twice = params.find((p) => p.name === name);
    if (twice)
      diag.error(
        ErrorCode.INVALID_ATTRIBUTE,
        `Parameter "${name}" is given twice (first at line ${twice.loc.line}).`,
        kid.loc,
        'Keep one <param> per name.',
      );
    params.push({
      name,
      value: readValue(kid, diag, true) ?? { kind: 'literal', value: '' },
      loc: kid.loc,
    });
  }
  if (el.attrs.item_id === undefined) return undefined;
  // Later RYE files write canonical refs: item_id="tool:rye/bash/bash" or "directive:x/y".
  const ref = /^(tool|directive):(.+)$/.exec(el.attrs.item_id);
  if (ref)
    return {
      type: 'execute',
      itemType: ref[1] as 'tool' | 'directive',
      itemId: ref[2]!,
      params,
      loc: el.loc,
    };
  return { type: 'execute', itemType, itemId: el.attrs.item_id, params, loc: el.loc };
}
