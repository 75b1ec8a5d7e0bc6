/** The control elements of a step or parallel block: conditions, assigns, retry, timeout, edges. */
import { didYouMean } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import type {
  Action,
  Assign,
  Compensation,
  Condition,
  Edge,
  RetryPolicy,
  StepLock,
  StepRateLimit,
} from './ast.js';
import type { Diagnostics } from './diagnostics.js';
import { attrLoc, ElementReader } from './element-reader.js';
import { readExecute } from './read-action.js';
import { CONDITION_TAGS, readCondition, readConditionHost } from './read-condition.js';
import { readValue } from './read-value.js';
import { elementsOf, type XmlElement } from './xml-element.js';

/** The control elements shared by steps and parallel blocks. */
export interface Control {
  condition: Condition | undefined;
  assigns: Assign[];
  retry: RetryPolicy | undefined;
  timeoutMs: number | undefined;
  next: Edge[] | undefined;
  lock?: StepLock;
  rateLimit?: StepRateLimit;
}

/**
 * Reads `<condition>`/`<any>`/`<all>`/`<not>`, `<assign>`, `<retry>`, `<timeout>`, `<next>`,
 * `<lock>` and `<rate_limit>`.
 */
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
      out.retry = readRetry(kid, diag);
    } else if (kid.tag === 'timeout') {
      out.timeoutMs = readTimeout(kid, diag) ?? out.timeoutMs;
    } else if (kid.tag === 'next') {
      out.next = readNext(kid, diag);
    } else if (kid.tag === 'lock') {
      const r = new ElementReader(kid, diag, ['key', 'limit', 'lease_seconds'], ['key', 'limit']);
      const limit = r.int('limit', 1);
      const lease = r.num('lease_seconds') ?? 30;
      if (lease < 1)
        diag.error(
          ErrorCode.INVALID_ATTRIBUTE,
          `<lock lease_seconds="${lease}">: a lease is at least 1 second.`,
          attrLoc(kid, 'lease_seconds'),
          'The lease is renewed while the tool runs and frees the slot this long after a worker dies; 30 is a good value.',
        );
      else if (limit !== undefined && r.str('key'))
        out.lock = { key: r.str('key')!, limit, leaseMs: Math.round(lease * 1000), loc: kid.loc };
    } else if (kid.tag === 'rate_limit') {
      const r = new ElementReader(kid, diag, ['key', 'max', 'per_seconds'], ['key', 'max']);
      const max = r.int('max', 1);
      const per = r.num('per_seconds') ?? 1;
      if (!(per > 0))
        diag.error(
          ErrorCode.INVALID_ATTRIBUTE,
          `<rate_limit per_seconds="${per}">: the window must be longer than 0 seconds.`,
          attrLoc(kid, 'per_seconds'),
          'Write e.g. per_seconds="1" (max calls per second).',
        );
      else if (max !== undefined && r.str('key'))
        out.rateLimit = {
          key: r.str('key')!,
          max,
          durationMs: Math.round(per * 1000),
          loc: kid.loc,
        };
    }
  }
  return out;
}

/** `<retry attempts backoff delay_ms max_delay_ms>`. */
function readRetry(el: XmlElement, diag: Diagnostics): RetryPolicy {
  const r = new ElementReader(
    el,
    diag,
    ['attempts', 'backoff', 'delay_ms', 'max_delay_ms'],
    ['attempts'],
  );
  return {
    attempts: r.int('attempts', 1) ?? 1,
    backoff: r.oneOf('backoff', ['fixed', 'exponential'] as const, 'exponential'),
    delayMs: r.int('delay_ms', 0) ?? 1000,
    maxDelayMs: r.int('max_delay_ms', 0) ?? 30_000,
  };
}

/** `<timeout seconds>`, in ms (undefined when it is not valid, which is reported). */
function readTimeout(el: XmlElement, diag: Diagnostics): number | undefined {
  const seconds = new ElementReader(el, diag, ['seconds'], ['seconds']).num('seconds');
  return seconds === undefined ? undefined : Math.round(seconds * 1000);
}

/** What a `<compensate>` may hold. */
const COMPENSATE_TAGS = ['execute', 'retry', 'timeout'];
/** Actions a step may hold, none of which undoes anything but an `<execute>`. */
const OTHER_ACTIONS = ['foreach', 'render', 'instruction', 'wait'];

/**
 * Reads the `<compensate>` of step `name`, whose action is `action` (undefined when the step holds
 * none that could be read): one `<execute>`, with its own `<retry>` and `<timeout>`. Only a step
 * that runs an `<execute>` or a `<foreach>` has something to undo. Undefined when there is none,
 * or when it is malformed (reported).
 */
export function readCompensate(
  step: XmlElement,
  name: string,
  action: Action | undefined,
  diag: Diagnostics,
): Compensation | undefined {
  const all = elementsOf(step).filter((k) => k.tag === 'compensate');
  if (all.length === 0) return undefined;
  const el = all[0]!;
  for (const extra of all.slice(1))
    diag.error(
      ErrorCode.STEP_ACTION,
      `Step "${name}" holds more than one <compensate>; a step is undone by one.`,
      extra.loc,
      'Keep one <compensate> around the <execute> that undoes the step; a child directive can do several things.',
    );
  new ElementReader(el, diag, []);
  const executes: XmlElement[] = [];
  let retry: RetryPolicy | undefined;
  let timeoutMs: number | undefined;
  let broken = false;
  for (const kid of elementsOf(el)) {
    if (kid.tag === 'execute') executes.push(kid);
    else if (kid.tag === 'retry') retry = readRetry(kid, diag);
    else if (kid.tag === 'timeout') timeoutMs = readTimeout(kid, diag);
    else if (OTHER_ACTIONS.includes(kid.tag)) {
      broken = true;
      diag.error(
        ErrorCode.STEP_ACTION,
        `<compensate> in step "${name}" holds <${kid.tag}>; a compensation is one <execute>: the tool or child directive that undoes the step.`,
        kid.loc,
        'Write <compensate><execute item_type="tool" item_id="…">…</execute></compensate>; for a foreach step it runs once per item, with the item in scope.',
      );
    } else {
      broken = true;
      diag.error(
        ErrorCode.UNKNOWN_ELEMENT,
        `<compensate> in step "${name}" has an unknown element <${kid.tag}>.${didYouMean(kid.tag, COMPENSATE_TAGS)}`,
        kid.loc,
        `A <compensate> holds one <execute> and optionally <retry> and <timeout>.`,
      );
    }
  }
  if (executes.length !== 1) {
    diag.error(
      ErrorCode.STEP_ACTION,
      `<compensate> in step "${name}" holds ${executes.length === 0 ? 'no' : executes.length} <execute> elements; it must hold exactly one: the work that undoes the step.`,
      executes.length === 0 ? el.loc : executes[1]!.loc,
      'Example: <compensate><execute item_type="tool" item_id="orders/cancel"><param name="id" value="${result.id}"/></execute></compensate>.',
    );
    return undefined;
  }
  if (action !== undefined && action.type !== 'execute' && action.type !== 'foreach') {
    diag.error(
      ErrorCode.STEP_ACTION,
      `Step "${name}" ${whatItDoes(step, action)}, which leaves nothing to undo: <compensate> undoes a step that runs an <execute> or a <foreach>.`,
      el.loc,
      'Move the <compensate> into the step whose tool or child directive it undoes, or remove it.',
    );
    return undefined;
  }
  const execute = readExecute(executes[0]!, diag);
  if (execute === undefined || broken) return undefined;
  return { execute, retry, timeoutMs, loc: el.loc };
}

/** What a step does, as a compensation's error says it. */
function whatItDoes(step: XmlElement, action: Action): string {
  // A step without an action element becomes an instruction standing where the step does.
  if (action.type === 'instruction' && action.loc === step.loc) return 'holds no action';
  return action.type === 'instruction' ? 'is an <instruction>' : `runs <${action.type}>`;
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
