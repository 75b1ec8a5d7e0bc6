/**
 * The data a template, condition or expression sees during a run (DIRECTIVES.md, "Data during a
 * run"), and how its named roots are read.
 */
import { MISSING } from './path.js';

/** What templates, conditions and expressions read. Plain data; never mutated here. */
export interface Scope {
  /** The validated inputs (`${inputs.x}`, `{input:x}`). */
  inputs: Record<string, unknown>;
  /** Values written by `<assign>` (`${state.x}`). */
  state: Record<string, unknown>;
  /** `steps.NAME = { status, result, error, attempts, startedAt, endedAt }`. */
  steps: Record<string, unknown>;
  /** Inside a step: that step's result. */
  result?: unknown;
  /** The last error `{ code, message, retryable }`, e.g. after `on_error`. */
  error?: unknown;
  /**
   * Environment variables for `{env:VAR}` and `${env.VAR}`. Templates only: conditions and
   * expressions never see the environment, so secrets cannot leak into data through them.
   */
  env?: Record<string, string | undefined>;
  /**
   * Loop variables of `foreach` (`item`, `item_index`, or whatever `as` names): roots in
   * templates (`${item.name}`), top-level names (and `$item` variables) in JSONata.
   */
  vars?: Record<string, unknown>;
}

/** Clock roots every template can read (RYE graphs' builtins). */
export const CLOCK_ROOTS = ['_now', '_timestamp'] as const;

/** Root names that every scope has, in the order error messages list them. */
export const BUILTIN_ROOTS = ['inputs', 'state', 'steps', 'result', 'error', 'env'] as const;

/**
 * The value of the root `name` in `scope`, or {@link MISSING}. Built-in roots win over loop
 * variables of the same name, so that a `foreach as="state"` cannot hide the run's state (the
 * compiler should reject such names anyway). `env` is the environment only when `withEnv` is
 * set; otherwise it is an ordinary name, as it is in {@link scopeData}.
 */
export function readRoot(scope: Scope, name: string, withEnv: boolean): unknown {
  if (name === 'env' && withEnv) return scope.env ?? MISSING;
  let value: unknown;
  switch (name) {
    case 'inputs':
      value = scope.inputs;
      break;
    case 'state':
      value = scope.state;
      break;
    case 'steps':
      value = scope.steps;
      break;
    case 'result':
      value = scope.result;
      break;
    case 'error':
      value = scope.error;
      break;
    // RYE graphs' clock builtins: the current time as ISO text and as epoch milliseconds.
    case '_now':
      return new Date().toISOString();
    case '_timestamp':
      return Date.now();
    default: {
      const vars = scope.vars;
      value =
        vars !== undefined && Object.prototype.hasOwnProperty.call(vars, name)
          ? vars[name]
          : undefined;
    }
  }
  return value === undefined ? MISSING : value;
}

/** The root names readable in `scope` (built-ins first, then loop variables), for messages. */
export function rootNames(scope: Scope): string[] {
  const names: string[] = [...BUILTIN_ROOTS];
  if (scope.vars !== undefined) {
    for (const name of Object.keys(scope.vars)) if (!names.includes(name)) names.push(name);
  }
  return names;
}

/**
 * The document JSONata expressions evaluate over: `{inputs, state, steps, result, error}` plus
 * the loop variables as top-level names (built-ins win, as in {@link readRoot}). `result` and
 * `error` are left out when unset so that `$keys($)` lists only what exists.
 */
export function scopeData(scope: Scope): Record<string, unknown> {
  const data: Record<string, unknown> = scope.vars === undefined ? {} : { ...scope.vars };
  data.inputs = scope.inputs;
  data.state = scope.state;
  data.steps = scope.steps;
  if (scope.result !== undefined) data.result = scope.result;
  else delete data.result;
  if (scope.error !== undefined) data.error = scope.error;
  else delete data.error;
  return data;
}
