/**
 * Step conditions and edge guards (DIRECTIVES.md, "Process"): RYE's `{path, op, value}` with
 * `any` / `all` / `not`, or a JSONata expression whose truthiness decides.
 */
import type { Condition } from '../directive/ast.js';
import { DirigentError, ErrorCode } from '../errors/index.js';
import { compareValues } from './compare.js';
import { compileExpression, type ExpressionOptions } from './expression.js';
import { lookupPath, MISSING, splitPath } from './path.js';
import { readRoot, type Scope } from './scope.js';
import { compileTemplate, hasTemplate } from './template.js';

/** Split condition paths by text: conditions are re-evaluated at every pass of a loop. */
const PATH_LIMIT = 1000;
const paths = new Map<string, string[]>();

/**
 * Whether `cond` holds in `scope`.
 * - `compare`: resolves `path` against `{inputs, state, steps, result, error, ...vars}` (a miss
 *   gives undefined; the environment is not reachable) and applies `op` with
 *   {@link compareValues}: `"42\n"` from bash stdout equals `42`.
 * - `any` (none holds when empty), `all` (holds when empty), `not`.
 * - `expr`: the JSONata expression's result, by {@link isTruthy} (`options` limit it).
 *
 * Throws `EXPRESSION_FAILED` / `INVALID_EXPRESSION` from expressions and `INVALID_CONDITION`
 * for a bad regex or an unknown condition kind.
 */
export function evaluateCondition(
  cond: Condition,
  scope: Scope,
  options?: ExpressionOptions,
): boolean {
  switch (cond.kind) {
    case 'compare': {
      // A `value` may itself be a template (`value="${inputs.limit}"`), read when the condition is.
      const expected =
        typeof cond.value === 'string' && hasTemplate(cond.value)
          ? compileTemplate(cond.value).evaluate(scope)
          : cond.value;
      return compareValues(resolveConditionPath(cond.path, scope), cond.op, expected);
    }
    case 'any':
      return cond.of.some((inner) => evaluateCondition(inner, scope, options));
    case 'all':
      return cond.of.every((inner) => evaluateCondition(inner, scope, options));
    case 'not':
      return !evaluateCondition(cond.of, scope, options);
    case 'expr':
      return isTruthy(compileExpression(cond.source).evaluate(scope, options));
    default: {
      const unknown: never = cond;
      throw DirigentError.fatal(
        ErrorCode.INVALID_CONDITION,
        `unknown condition kind "${String((unknown as { kind?: unknown }).kind)}"`,
      );
    }
  }
}

/**
 * The value at a dotted condition path (`state.files.0.path`, `item.name`), or undefined on any
 * miss. The first segment names a root: `inputs`, `state`, `steps`, `result`, `error` or a
 * loop variable.
 */
export function resolveConditionPath(path: string, scope: Scope): unknown {
  let segments = paths.get(path);
  if (segments === undefined) {
    segments = splitPath(path);
    if (paths.size >= PATH_LIMIT) {
      const oldest = paths.keys().next();
      if (oldest.done !== true) paths.delete(oldest.value);
    }
    paths.set(path, segments);
  }
  const first = segments[0];
  if (first === undefined) return undefined;
  const root = readRoot(scope, first, false);
  const value = root === MISSING ? MISSING : lookupPath(root, segments, 1);
  return value === MISSING ? undefined : value;
}

/**
 * JavaScript-like truthiness of an expression result: undefined, null, false, 0, NaN, `""` and
 * the empty array are false; everything else (empty objects included) is true.
 */
export function isTruthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  return Boolean(value);
}
