/** The control elements of a step or parallel block: conditions, assigns, retry, timeout, edges. */
import { didYouMean } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { Assign, Condition, Edge, RetryPolicy } from './ast.js';
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
