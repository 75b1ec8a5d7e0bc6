/**
 * The operators of RYE's graph conditions (`eq ne gt gte lt lte in contains regex exists`).
 *
 * Values reach conditions from two loosely typed places: XML attributes (`value="10"` is read as
 * JSON when it parses, else kept as a string) and tool output, notably bash stdout, which ends in
 * a newline (`"42\n"`). So equality and ordering coerce between numbers, booleans and their
 * text, ignoring surrounding whitespace; otherwise `${result.stdout} eq 42` could never hold.
 */
import type * as Re2js from 're2js';
import type { RE2JS } from 're2js';
import { DirigentError, ErrorCode } from '../errors/index.js';
import type { CompareOp } from '../directive/ast.js';
import { stringifyValue } from './template.js';
import { lazyPackage } from '../lazy-package.js';

/** re2js, loaded by the first pattern compiled (a run that matches none loads none). */
const re2js = lazyPackage<typeof Re2js>('re2js');

/** A decimal number, optionally signed, with optional fraction and exponent; no hex, no blanks. */
const NUMBER_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
/** Compiled regexes of `regex` conditions, by source: the same conditions run on every pass. */
const REGEX_LIMIT = 500;
const regexes = new Map<string, RE2JS>();

/**
 * The number a value stands for: a finite number itself, or a string whose trimmed text is a
 * decimal number (`" 42\n"` → 42). Anything else (booleans, `""`, `"0x10"`) gives undefined.
 */
export function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isNaN(value) ? undefined : value;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  return NUMBER_RE.test(text) ? Number(text) : undefined;
}

/**
 * Deep equality with the coercions conditions need: a number equals a string whose trimmed text
 * is that number (`42` equals `"42\n"`, bash stdout included), a boolean equals the trimmed text
 * `"true"` / `"false"`, and `null` equals `undefined` (a missing path equals `null`). Arrays and
 * objects are equal when their elements / own keys are, with the same rules. Two strings are
 * compared exactly: `"done\n"` does not equal `"done"` (use `regex` or `contains` for that).
 */
export function looseEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || a === undefined) return b === null || b === undefined;
  if (b === null || b === undefined) return false;
  if (typeof a === 'string' && typeof b !== 'string') return scalarEqualsText(b, a);
  if (typeof b === 'string' && typeof a !== 'string') return scalarEqualsText(a, b);
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!looseEquals(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(right, key)) return false;
    if (!looseEquals(left[key], right[key])) return false;
  }
  return true;
}

function scalarEqualsText(value: unknown, text: string): boolean {
  if (typeof value === 'number') return toNumber(text) === value;
  if (typeof value === 'boolean') return text.trim() === String(value);
  return false;
}

/**
 * Applies `op` to the value found at a condition's path (`actual`, undefined on a miss) and the
 * condition's `value` (`expected`):
 * - `eq` / `ne`: {@link looseEquals}.
 * - `gt gte lt lte`: false when either side is null/undefined; as numbers when both sides are
 *   numbers or numeric strings ({@link toNumber}), else their text compared lexicographically.
 * - `in`: `actual` equals (loosely) an element of the `expected` array; when `expected` is a
 *   string, the text of `actual` is a substring of it (as Python's `in`).
 * - `contains`: an array `actual` has an element equal to `expected`; otherwise the text of
 *   `actual` includes the text of `expected`. False when `actual` is null/undefined.
 * - `regex`: `new RegExp(expected)` finds a match in the text of `actual`; false when `actual` is
 *   null/undefined (rather than matching the word "undefined"). A bad pattern throws
 *   `INVALID_CONDITION` (fatal).
 * - `exists`: `actual` is neither null nor undefined; with `expected` `false`, the reverse.
 *
 * "Text" is {@link stringifyValue}: objects and arrays as JSON.
 */
export function compareValues(actual: unknown, op: CompareOp, expected: unknown): boolean {
  switch (op) {
    case 'eq':
      return looseEquals(actual, expected);
    case 'ne':
      return !looseEquals(actual, expected);
    case 'gt':
      return order(actual, expected, (sign) => sign > 0);
    case 'gte':
      return order(actual, expected, (sign) => sign >= 0);
    case 'lt':
      return order(actual, expected, (sign) => sign < 0);
    case 'lte':
      return order(actual, expected, (sign) => sign <= 0);
    case 'in':
      if (Array.isArray(expected)) return expected.some((item) => looseEquals(actual, item));
      if (typeof expected === 'string') {
        return actual !== null && actual !== undefined && expected.includes(stringifyValue(actual));
      }
      return false;
    case 'contains':
      if (actual === null || actual === undefined) return false;
      if (Array.isArray(actual)) return actual.some((item) => looseEquals(item, expected));
      return stringifyValue(actual).includes(stringifyValue(expected));
    case 'regex':
      if (actual === null || actual === undefined) return false;
      return regex(stringifyValue(expected)).test(stringifyValue(actual));
    case 'exists': {
      const exists = actual !== null && actual !== undefined;
      return expected === false || expected === 'false' ? !exists : exists;
    }
    default: {
      const unknown: never = op;
      throw DirigentError.fatal(
        ErrorCode.INVALID_CONDITION,
        `unknown operator "${String(unknown)}"`,
      );
    }
  }
}

function order(actual: unknown, expected: unknown, holds: (sign: number) => boolean): boolean {
  if (actual === null || actual === undefined || expected === null || expected === undefined) {
    return false;
  }
  const a = toNumber(actual);
  const b = toNumber(expected);
  if (a !== undefined && b !== undefined) return holds(a === b ? 0 : a < b ? -1 : 1);
  const left = stringifyValue(actual);
  const right = stringifyValue(expected);
  return holds(left === right ? 0 : left < right ? -1 : 1);
}

/**
 * A `regex` condition's pattern, run by RE2 (linear in the text's length whatever the pattern, so a
 * value cannot make a condition hang, as `(a+)+$` would a backtracking engine).
 */
function regex(source: string): RE2JS {
  let compiled = regexes.get(source);
  if (compiled === undefined) {
    try {
      compiled = re2js().RE2JS.compile(source);
    } catch (err) {
      throw DirigentError.fatal(
        ErrorCode.INVALID_CONDITION,
        `invalid regular expression /${source}/: ${(err as Error).message}`,
        {
          hint: 'Write an RE2 regular expression (the JavaScript syntax without backreferences or lookaround), without slashes or flags; (?i) at the start ignores case.',
          cause: err,
        },
      );
    }
    if (regexes.size >= REGEX_LIMIT) {
      const oldest = regexes.keys().next();
      if (oldest.done !== true) regexes.delete(oldest.value);
    }
    regexes.set(source, compiled);
  }
  return compiled;
}
