import { setMaxListeners } from 'node:events';
import type { ExecuteAction, ForeachAction } from '../directive/ast.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { Scope } from '../expr/scope.js';
import { evaluateValue } from '../expr/value.js';

/** Runs one item's `<execute>` with the loop variables in scope. */
export type RunItem = (
  execute: ExecuteAction,
  vars: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<unknown>;

/**
 * Runs a `<foreach>`: at most `parallel` items at a time, results in input order. With
 * `fail_fast` the first failure aborts the items still running and rejects; with `continue` a
 * failed item's slot holds `{ error: { code, message } }` and the others go on.
 */
export async function runForeach(
  action: ForeachAction,
  scope: Scope,
  signal: AbortSignal,
  runItem: RunItem,
): Promise<unknown[]> {
  const items = evaluateValue(action.over, scope);
  if (!Array.isArray(items)) {
    throw DirigentError.fatal(
      ErrorCode.FOREACH_NOT_ARRAY,
      `<foreach> needs an array to go over, but got ${describe(items)}.`,
      {
        location: action.loc,
        hint: 'Point "over" at an array, e.g. over="${inputs.files}", or build one with expr="…".',
      },
    );
  }
  const results: unknown[] = new Array(items.length);
  const local = new AbortController();
  // Every item's call listens on this one signal: as many listeners as items run at once.
  setMaxListeners(0, local.signal);
  const onAbort = () => local.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let next = 0;
  let failure: unknown;
  const worker = async (): Promise<void> => {
    while (failure === undefined && !local.signal.aborted && next < items.length) {
      const index = next++;
      const vars = { [action.as]: items[index], [`${action.as}_index`]: index };
      try {
        results[index] = await runItem(action.execute, vars, local.signal);
      } catch (err) {
        if (action.onFailure === 'continue' && !signal.aborted) {
          const e = DirigentError.from(err);
          results[index] = { error: { code: e.code, message: e.message } };
        } else if (failure === undefined) {
          failure = err;
          local.abort(err);
        }
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(action.parallel, items.length) }, worker));
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  if (failure !== undefined) throw failure;
  if (signal.aborted) throw signal.reason;
  return results;
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  const text = JSON.stringify(value);
  return `${typeof value} ${text.length > 60 ? `${text.slice(0, 57)}...` : text}`;
}
