/**
 * JSONata expressions (`expr="state.i + 1"`), evaluated synchronously over
 * `{inputs, state, steps, result, error, ...vars}` and bounded, so that a runaway expression
 * fails its step instead of blocking the process: its time (checked as it goes) and depth, its
 * regular expressions (run by RE2, linear in the text), the ranges it builds and the text `$pad`
 * makes.
 */
import type jsonata from 'jsonata';
import { DirigentError, ErrorCode } from '../errors/index.js';
import { scopeData, type Scope } from './scope.js';
import { lazyPackage } from '../lazy-package.js';
import { parseJson } from './parse-json.js';
import { compileRe2, Re2RegExp } from './re2-regexp.js';
import { ReadsCollector, type ExpressionReads, type ReadFrame } from './expression-reads.js';

export type { ExpressionName, ExpressionPath, ExpressionReads } from './expression-reads.js';

/** JSONata, loaded by the first expression compiled (required: its CommonJS text is not scanned for ES exports). */
const jsonataPackage = lazyPackage<typeof jsonata>('jsonata');

/**
 * JSONata's entry point, with RE2 as its regular expression engine. JSONata keeps the engine of
 * the last expression it compiled in a global that every evaluation reads, so each evaluation
 * sets it again (a library in the same process may have compiled an expression of its own).
 */
function compileJsonata(source: string): jsonata.Expression {
  const compile = jsonataPackage() as unknown as (s: string, o: unknown) => jsonata.Expression;
  return compile(source, { RegexEngine: Re2RegExp });
}

/** Limits of one evaluation. */
export interface ExpressionOptions {
  /**
   * CPU time (of this process) after which the evaluation is stopped, in ms. Default 100. CPU
   * time, not wall time: an evaluation slowed by other processes on the machine is not stopped.
   */
  timeoutMs?: number;
  /** Deepest nesting of JSONata evaluation frames (recursion) allowed. Default 200. */
  maxDepth?: number;
}

/** A parsed expression. */
export interface CompiledExpression {
  /** The expression's text. */
  readonly source: string;
  /**
   * What it reads of the data and which variables and functions it names unbound, for
   * validation (see `expression-reads.ts`).
   */
  readonly reads: ExpressionReads;
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

/**
 * The most numbers a range (`[1..n]`) may hold. JSONata allows 10 million, which takes a quarter
 * of a second to build in one step, past the time box; a million takes about 25 ms.
 */
export const MAX_RANGE = 1_000_000;
/** The longest text `$pad` may make (the size of a tool's result, 8 MiB). */
export const MAX_PAD = 8 * 1024 * 1024;

/** Thrown by the hooks below; turned into a DirigentError once the source is known. */
class Runaway {
  constructor(
    readonly reason: 'time' | 'depth' | 'range' | 'pad',
    readonly size = 0,
  ) {}
}

/**
 * The operands of every range (`a..b`) of the expressions compiled: a left operand maps to null,
 * a right operand to its left operand. When the right operand's value is known (its exit), so is
 * the range's size, before JSONata builds it.
 */
const rangeOperands = new WeakMap<object, object | null>();
/** The value each left operand of a range took last. */
const rangeStarts = new WeakMap<object, unknown>();

/**
 * The evaluation in progress. Evaluation is synchronous and JSONata's `$eval` runs inside the same
 * environment, so one module-level budget serves every expression; `evaluate` resets it.
 */
const budget = { cpuStart: -1, cpuBudget: 0, depth: 0, maxDepth: 0, entries: 0 };

/** Node entries between two looks at the clock. */
const CLOCK_EVERY = 256;

/** The CPU time this process has used, in µs. */
function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

// JSONata's documented time-box technique: it calls these around every node it evaluates.
// The clock is the process's CPU time, read every CLOCK_EVERY entries only, and first at the
// first look: reading it costs more than most nodes, so an expression that does little work never
// reads it at all. Wall time would stop an expression that did little work while the process was
// descheduled (on a loaded 2-core machine, pauses of 100-200 ms were seen).
function onEntry(): void {
  if (++budget.depth > budget.maxDepth) throw new Runaway('depth');
  if (++budget.entries % CLOCK_EVERY !== 0) return;
  if (budget.cpuStart < 0) budget.cpuStart = cpuMicros();
  else if (cpuMicros() - budget.cpuStart > budget.cpuBudget) throw new Runaway('time');
}
function onExit(node: object, _input: unknown, _env: unknown, result: unknown): void {
  budget.depth--;
  const start = rangeOperands.get(node);
  if (start === undefined) return;
  if (start === null) {
    rangeStarts.set(node, result);
    return;
  }
  const from = singleNumber(rangeStarts.get(start));
  const to = singleNumber(result);
  if (from !== undefined && to !== undefined && to - from >= MAX_RANGE)
    throw new Runaway('range', to - from + 1);
}

/** A number, or the number a path selected (JSONata hands a path's result over as a sequence). */
function singleNumber(value: unknown): number | undefined {
  const one = Array.isArray(value) && value.length === 1 ? (value[0] as unknown) : value;
  return typeof one === 'number' ? one : undefined;
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
    expression = compileJsonata(source);
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
  const reads = inspect(expression.ast(), source);
  expression.assign('__evaluate_entry', onEntry);
  expression.assign('__evaluate_exit', onExit);
  expression.assign('pad', boundedPad);
  expression.assign('parse', parseJson);
  // `$eval` would read a value as an expression: shadowed, so that even `$f := $eval` cannot reach it.
  expression.assign('eval', () => {
    throw evalRefused(source);
  });
  return {
    source,
    reads,
    evaluate(scope, options) {
      const timeoutMs = options?.timeoutMs ?? DEFAULT_EXPRESSION_TIMEOUT_MS;
      const maxDepth = options?.maxDepth ?? DEFAULT_EXPRESSION_MAX_DEPTH;
      budget.cpuStart = -1;
      budget.cpuBudget = timeoutMs * 1000;
      budget.depth = 0;
      budget.entries = 0;
      budget.maxDepth = maxDepth;
      // JSONata reads the engine from a global its last compile set (`compileJsonata`).
      (jsonataPackage() as unknown as { RegexEngine: unknown }).RegexEngine = Re2RegExp;
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

/**
 * Walks the parsed expression once (without recursion): refuses `$eval` and regex literals RE2
 * cannot run (`INVALID_EXPRESSION`, at their position), notes the operands of every range
 * (`a..b`) so that {@link onExit} can bound its size, and collects what the expression reads
 * (see `expression-reads.ts`).
 */
function inspect(ast: object, source: string): ExpressionReads {
  const reads = new ReadsCollector();
  const stack: ReadFrame[] = [{ node: ast, atRoot: true }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const node = frame.node;
    const { type, value, lhs, rhs } = node as Record<string, unknown>;
    if (type === 'regex' && value instanceof RegExp) checkRegex(value, node, source);
    if (type === 'binary' && value === '..' && isObject(lhs) && isObject(rhs)) {
      rangeOperands.set(lhs, null);
      rangeOperands.set(rhs, lhs);
    }
    reads.visit(frame, stack);
  }
  if (reads.mentions('eval')) throw evalRefused(source);
  return reads.result();
}

/** Refuses, with `INVALID_EXPRESSION` at its position, a regex literal RE2 cannot run. */
function checkRegex(regex: RegExp, node: { position?: unknown }, source: string): void {
  try {
    compileRe2(regex);
  } catch (err) {
    const position = typeof node.position === 'number' ? node.position : undefined;
    throw DirigentError.fatal(
      ErrorCode.INVALID_EXPRESSION,
      `invalid expression ${quote(source)}: the regular expression /${regex.source}/ is not one RE2 runs (${(err as Error).message})${position === undefined ? '' : ` (at position ${position})`}`,
      {
        hint: 'Regular expressions in expressions run on RE2, whose time is linear in the text: write it without look-around and back-references (a condition or a second expression can do their part).',
        details: { position },
      },
    );
  }
}

function isObject(value: unknown): value is object {
  return value !== null && typeof value === 'object';
}

/** JSONata's own `$pad`, taken from it the first time a pad is asked for. */
let jsonataPad: ((...args: unknown[]) => unknown) | undefined;

/** `$pad(text, width, char)`, refusing to make text longer than {@link MAX_PAD} characters. */
function boundedPad(text: unknown, width: unknown, char: unknown): unknown {
  if (typeof width === 'number' && Math.abs(width) > MAX_PAD) {
    throw new Runaway('pad', Math.abs(width));
  }
  jsonataPad ??= (compileJsonata('$pad').evaluate({}) as { implementation: typeof boundedPad })
    .implementation;
  return jsonataPad(text, width, char);
}

const LOOP_HINT = 'Look for an endless loop or recursion, or make the expression cheaper.';

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
    // A function of ours ($parse) that refused its argument says why, under its own code.
    if (inner instanceof DirigentError)
      return DirigentError.fatal(
        inner.code,
        `expression ${quote(source)} failed: ${inner.message}`,
        {
          ...(inner.hint !== undefined && { hint: inner.hint }),
          ...(inner.details !== undefined && { details: inner.details }),
        },
      );
    if (inner instanceof Runaway) {
      const [what, hint] = {
        time: [`used more than ${timeoutMs} ms of CPU time`, LOOP_HINT],
        depth: [`recursed deeper than ${maxDepth} levels`, LOOP_HINT],
        range: [
          `would build a range of ${inner.size} numbers, more than ${MAX_RANGE}`,
          'Bound the range where it is written, or leave big work to a tool step.',
        ],
        pad: [
          `would pad text to ${inner.size} characters, more than ${MAX_PAD}`,
          'Bound the width where it is written (a value may set it), or leave big text to a tool step.',
        ],
      }[inner.reason];
      return DirigentError.fatal(
        ErrorCode.EXPRESSION_FAILED,
        `expression ${quote(source)} ${what} and was stopped`,
        { hint, details: { timeoutMs, maxDepth, maxRange: MAX_RANGE, maxPad: MAX_PAD } },
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
