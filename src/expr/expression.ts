/**
 * JSONata expressions (`expr="state.i + 1"`), evaluated synchronously over
 * `{inputs, state, steps, result, error, ...vars}` and time-boxed, so that a runaway expression
 * fails its step instead of blocking the process.
 */
import type jsonata from 'jsonata';
import { DirigentError, ErrorCode } from '../errors/index.js';
import { scopeData, type Scope } from './scope.js';
import { lazyPackage } from '../directive/lazy-package.js';

/** JSONata, loaded by the first expression compiled (required: its CommonJS text is not scanned for ES exports). */
const jsonataPackage = lazyPackage<typeof jsonata>('jsonata');

/** Limits of one evaluation. */
export interface ExpressionOptions {
  /** Wall time after which the evaluation is stopped, in ms. Default 100. */
  timeoutMs?: number;
  /** Deepest nesting of JSONata evaluation frames (recursion) allowed. Default 200. */
  maxDepth?: number;
}

/** A parsed expression. */
export interface CompiledExpression {
  /** The expression's text. */
  readonly source: string;
  /**
   * Evaluates synchronously. The result is plain JSON data (JSONata sequences become arrays,
   * functions become undefined), or undefined when the expression selects nothing. Throws
   * `EXPRESSION_FAILED` (fatal) when it runs too long, recurses too deep, or JSONata fails.
   */
  evaluate(scope: Scope, options?: ExpressionOptions): unknown;
}

/** Default of {@link ExpressionOptions.timeoutMs}. */
export const DEFAULT_EXPRESSION_TIMEOUT_MS = 100;
/** Default of {@link ExpressionOptions.maxDepth}. */
export const DEFAULT_EXPRESSION_MAX_DEPTH = 200;

const CACHE_LIMIT = 1000;
const cache = new Map<string, CompiledExpression>();
const NO_VARS: Record<string, unknown> = Object.freeze({});

/** Thrown by the hooks below; turned into a DirigentError once the source is known. */
class Runaway {
  constructor(readonly reason: 'time' | 'depth') {}
}

/**
 * The evaluation in progress. Evaluation is synchronous and JSONata's `$eval` runs inside the same
 * environment, so one module-level budget serves every expression; `evaluate` resets it.
 */
const budget = { deadline: 0, depth: 0, maxDepth: 0, entries: 0 };

/** Node entries between two looks at the clock. */
const CLOCK_EVERY = 256;

// JSONata's documented time-box technique: it calls these around every node it evaluates.
// The clock is read every CLOCK_EVERY entries only: reading it costs more than most nodes, and an
// expression that does little work must never fail because the process was descheduled or paused
// for garbage collection (on a loaded 2-core machine pauses of 100-200 ms were seen).
function onEntry(): void {
  if (++budget.depth > budget.maxDepth) throw new Runaway('depth');
  if (++budget.entries % CLOCK_EVERY === 0 && performance.now() > budget.deadline)
    throw new Runaway('time');
}
function onExit(): void {
  budget.depth--;
}

/**
 * Parses `source` once (cached by source). A syntax error throws `INVALID_EXPRESSION` (fatal)
 * with JSONata's message and the position of the error.
 */
export function compileExpression(source: string): CompiledExpression {
  let compiled = cache.get(source);
  if (compiled === undefined) {
    compiled = build(source);
    if (cache.size >= CACHE_LIMIT) {
      const oldest = cache.keys().next();
      if (oldest.done !== true) cache.delete(oldest.value);
    }
    cache.set(source, compiled);
  }
  return compiled;
}

function build(source: string): CompiledExpression {
  if (source.trim() === '') {
    throw DirigentError.fatal(ErrorCode.INVALID_EXPRESSION, 'invalid expression: it is empty');
  }
  let expression: jsonata.Expression;
  try {
    expression = jsonataPackage()(source);
  } catch (err) {
    const { message, code, position } = jsonataError(err);
    throw DirigentError.fatal(
      ErrorCode.INVALID_EXPRESSION,
      `invalid expression ${quote(source)}: ${message}${position === undefined ? '' : ` (at position ${position})`}`,
      {
        hint: 'See https://docs.jsonata.org for the syntax.',
        details: { jsonataCode: code, position },
      },
    );
  }
  if (callsEval(expression.ast())) throw evalRefused(source);
  expression.assign('__evaluate_entry', onEntry);
  expression.assign('__evaluate_exit', onExit);
  // `$eval` would read a value as an expression: shadowed, so that even `$f := $eval` cannot reach it.
  expression.assign('eval', () => {
    throw evalRefused(source);
  });
  return {
    source,
    evaluate(scope, options) {
      const timeoutMs = options?.timeoutMs ?? DEFAULT_EXPRESSION_TIMEOUT_MS;
      const maxDepth = options?.maxDepth ?? DEFAULT_EXPRESSION_MAX_DEPTH;
      budget.deadline = performance.now() + timeoutMs;
      budget.depth = 0;
      budget.entries = 0;
      budget.maxDepth = maxDepth;
      try {
        // Passing bindings makes JSONata bind `$` in a fresh frame, so the cached expression
        // keeps no reference to this run's data; it also makes loop variables `$item`.
        return toPlain(expression.evaluate(scopeData(scope), scope.vars ?? NO_VARS));
      } catch (err) {
        throw failure(source, err, timeoutMs, maxDepth);
      }
    },
  };
}

/** Whether the parsed expression names `$eval` anywhere (walked without recursion). */
function callsEval(ast: unknown): boolean {
  const stack: unknown[] = [ast];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    const { type, value } = node as { type?: unknown; value?: unknown };
    if (type === 'variable' && value === 'eval') return true;
    for (const child of Object.values(node)) if (typeof child === 'object') stack.push(child);
  }
  return false;
}

function evalRefused(source: string): DirigentError {
  return DirigentError.fatal(
    ErrorCode.INVALID_EXPRESSION,
    `invalid expression ${quote(source)}: $eval is not available, since it would run a value as an expression`,
    {
      hint: 'Write the expression in the directive; values are data (compare or look them up instead).',
    },
  );
}

function failure(source: string, err: unknown, timeoutMs: number, maxDepth: number): DirigentError {
  // `$eval` wraps errors from the inner expression in `{ code: "D3121", error }`.
  for (let inner: unknown = err; inner !== null && typeof inner === 'object'; ) {
    if (inner instanceof Runaway) {
      const what =
        inner.reason === 'time'
          ? `ran longer than ${timeoutMs} ms`
          : `recursed deeper than ${maxDepth} levels`;
      return DirigentError.fatal(
        ErrorCode.EXPRESSION_FAILED,
        `expression ${quote(source)} ${what} and was stopped`,
        {
          hint: 'Look for an endless loop or recursion, or make the expression cheaper.',
          details: { timeoutMs, maxDepth },
        },
      );
    }
    inner = (inner as { error?: unknown }).error;
  }
  const { message, code, position } = jsonataError(err);
  const where =
    code === undefined
      ? ''
      : ` (JSONata ${code}${position === undefined ? '' : ` at position ${position}`})`;
  return DirigentError.fatal(
    ErrorCode.EXPRESSION_FAILED,
    `expression ${quote(source)} failed: ${message}${where}`,
    {
      details: { jsonataCode: code, position },
      cause: err,
    },
  );
}

/** JSONata throws plain objects `{ code, position, token, message }`, not always Errors. */
function jsonataError(err: unknown): { message: string; code?: string; position?: number } {
  if (err === null || typeof err !== 'object') return { message: String(err) };
  const { message, code, position } = err as {
    message?: unknown;
    code?: unknown;
    position?: unknown;
  };
  return {
    message: typeof message === 'string' ? message : String(err),
    ...(typeof code === 'string' && { code }),
    ...(typeof position === 'number' && { position }),
  };
}

function quote(source: string): string {
  return JSON.stringify(source.length > 80 ? `${source.slice(0, 77)}...` : source);
}

/**
 * Turns JSONata results into plain JSON data: sequences (arrays carrying `sequence`,
 * `keepSingleton`, … flags) become plain arrays, functions become undefined. Copy-on-write: a
 * value that needs no change (e.g. an object taken from the input) is returned as it is.
 */
function toPlain(value: unknown): unknown {
  if (typeof value === 'function') return undefined;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const isSequence = (value as { sequence?: unknown }).sequence === true;
    let out: unknown[] | undefined = isSequence ? [] : undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const plain = toPlain(item);
      if (out !== undefined) out.push(plain);
      else if (plain !== item) (out = value.slice(0, i)).push(plain);
    }
    return out ?? value;
  }
  const record = value as Record<string, unknown>;
  // JSONata lambdas are objects; they are not data.
  if (record._jsonata_lambda === true || record._jsonata_function === true) return undefined;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(record)) {
    const item = record[key];
    const plain = toPlain(item);
    if (plain !== item) (out ??= { ...record })[key] = plain;
  }
  return out ?? value;
}
