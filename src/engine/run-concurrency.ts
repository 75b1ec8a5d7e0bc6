/**
 * Run concurrency keys (DESIGN.md, "Operating runs"): `<concurrency key="${inputs.customer}"
 * limit="2"/>` lets at most `limit` runs of the directive go at once per rendered key, across every
 * worker. A run holds its slot from its start to its end (waiting or paused, it still holds it);
 * the runs that find no free slot wait `queued`, in start order per key, holding no worker slot,
 * and each slot that frees goes to the next of its key (see `redis/concurrency-slots.ts`).
 * Keys are served fairly: a key's waiting runs are parked apart, not in the queue every worker
 * reads, so one key with many waiting runs does not delay another.
 */
import type { Directive } from '../directive/ast.js';
import { compileTemplate, stringifyValue } from '../expr/template.js';

/** A run's concurrency key, rendered, and its limit. */
export interface RunConcurrency {
  key: string;
  limit: number;
}

/** The longest a rendered key is kept, in characters. */
const MAX_KEY = 200;

/**
 * The concurrency key of a run of `d` with `inputs` (validated), or undefined when the directive
 * declares none. A key that reads what the run was not given renders empty: such runs share the
 * key `""`.
 */
export function runConcurrencyOf(
  d: Directive,
  inputs: Record<string, unknown>,
): RunConcurrency | undefined {
  const c = d.runSettings.concurrency;
  if (c === undefined) return undefined;
  let key: string;
  try {
    key = stringifyValue(compileTemplate(c.key).evaluate({ inputs, state: {}, steps: {} }));
  } catch {
    key = '';
  }
  return { key: key.slice(0, MAX_KEY), limit: c.limit };
}
