import { didYouMean } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import { COMPARE_OPS, type CompareOp, type Condition } from './ast.js';
import type { Diagnostics } from './diagnostics.js';
import { attrLoc, ElementReader } from './element-reader.js';
import { elementsOf, type XmlElement } from './xml-element.js';

/** Elements that are conditions. */
export const CONDITION_TAGS = ['condition', 'any', 'all', 'not'] as const;

/** How every JSON text starts, after white space. */
const JSON_START = /^\s*[-0-9[{"tfn]/;

/** A condition's `value`: JSON when it parses as JSON (`10`, `true`, `["a"]`), else the string. */
export function readJsonish(raw: string): unknown {
  // Most values are words, on which JSON.parse throws, and a throw costs far more than this test.
  if (!JSON_START.test(raw)) return raw;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/**
 * Reads the condition held by the attributes `path op value` or `expr` of `el` (a `<condition>`
 * or `<when>`), or by its one nested `<any>/<all>/<not>/<condition>` child.
 */
export function readConditionHost(
  el: XmlElement,
  diag: Diagnostics,
  extraAttrs: readonly string[] = [],
): Condition | undefined {
  new ElementReader(el, diag, ['path', 'op', 'value', 'expr', ...extraAttrs]);
  const { path, expr, op, value } = el.attrs;
  const nested = elementsOf(el);
  if (expr !== undefined) {
    if (path !== undefined)
      diag.error(
        ErrorCode.INVALID_CONDITION,
        `<${el.tag}> has both "expr" and "path"; keep one.`,
        attrLoc(el, 'path'),
        'Write either expr="…" or path="…" op="…" value="…".',
      );
    return { kind: 'expr', source: expr, loc: attrLoc(el, 'expr') };
  }
  if (path !== undefined) return compare(el, diag, path, op, value);
  if (nested.length === 1 && (CONDITION_TAGS as readonly string[]).includes(nested[0]!.tag))
    return readCondition(nested[0]!, diag);
  if (el.tag === 'when' && nested.length === 0) return undefined;
  diag.error(
    ErrorCode.INVALID_CONDITION,
    `<${el.tag}> needs either path/op/value attributes, an expr attribute, or one nested <any>, <all>, <not> or <condition>.`,
    el.loc,
    'Example: <condition path="inputs.mode" op="eq" value="full"/>.',
  );
  return undefined;
}

/** Reads a `<condition>`, `<any>`, `<all>` or `<not>` element. */
export function readCondition(el: XmlElement, diag: Diagnostics): Condition | undefined {
  if (el.tag === 'condition') return readConditionHost(el, diag);
  new ElementReader(el, diag, []);
  const parts: Condition[] = [];
  for (const child of elementsOf(el)) {
    if (!(CONDITION_TAGS as readonly string[]).includes(child.tag)) {
      diag.error(
        ErrorCode.UNKNOWN_ELEMENT,
        `<${el.tag}> may hold only conditions, not <${child.tag}>.${didYouMean(child.tag, CONDITION_TAGS)}`,
        child.loc,
        `<${el.tag}> holds <condition path="…" op="…" value="…"/> elements and nested <any>, <all> or <not>.`,
      );
      continue;
    }
    const c = readCondition(child, diag);
    if (c) parts.push(c);
  }
  if (el.tag === 'not') {
    if (parts.length !== 1) {
      diag.error(
        ErrorCode.INVALID_CONDITION,
        `<not> holds exactly one condition, not ${parts.length}.`,
        el.loc,
        'To negate several conditions, wrap them in <all> or <any> inside the <not>.',
      );
      return undefined;
    }
    return { kind: 'not', of: parts[0]! };
  }
  if (parts.length === 0) {
    diag.error(
      ErrorCode.INVALID_CONDITION,
      `<${el.tag}> holds no condition.`,
      el.loc,
      `Put <condition path="…" op="…" value="…"/> elements inside <${el.tag}>, or remove it.`,
    );
    return undefined;
  }
  return { kind: el.tag as 'any' | 'all', of: parts };
}

function compare(
  el: XmlElement,
  diag: Diagnostics,
  path: string,
  op: string | undefined,
  value: string | undefined,
): Condition {
  const theOp = (op ?? 'eq') as CompareOp;
  if (!(COMPARE_OPS as readonly string[]).includes(theOp)) {
    diag.error(
      ErrorCode.INVALID_CONDITION,
      `<${el.tag}> op="${op}" is not an operator.${didYouMean(theOp, COMPARE_OPS)}`,
      attrLoc(el, 'op'),
      `Operators: ${COMPARE_OPS.join(' ')}.`,
    );
  }
  if (value === undefined && theOp !== 'exists') {
    diag.error(
      ErrorCode.MISSING_ATTRIBUTE,
      `<${el.tag} op="${theOp}"> needs a "value" attribute to compare ${path} with.`,
      el.loc,
      `Write <${el.tag} path="${path}" op="${theOp}" value="…"/>, or op="exists" to test that the path is set.`,
    );
  }
  return {
    kind: 'compare',
    path,
    op: theOp,
    value: value === undefined ? true : readJsonish(value),
    loc: attrLoc(el, 'path'),
  };
}
