/** The control elements of a step or parallel block: conditions, assigns, retry, timeout, edges. */
import { didYouMean } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { Assign, Condition, Edge, RetryPolicy, StepLock, StepRateLimit } from './ast.js';
import type { Diagnostics } from './diagnostics.js';
import { attrLoc, ElementReader } from './element-reader.js';
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
