import type { ActiveRun } from './active-run.js';
import { clockStart } from './run-record.js';

/** What a parkable run waits for: see {@link parkable}. */
export interface Parkable {
  /** The first time the run must act itself (a retry, a step's timeout, its time limit). */
  due: number | undefined;
  /** Whether some step waits for a tool call (not only for retries). */
  calls: boolean;
}

/**
 * Whether the run could be let go while its work goes on without it: every step under way either
 * waits to retry or waits for its tool call (not a child directive, whose run is in this process;
 * not a foreach, whose window of items is kept here and which, resumed, would look up every
 * item's call again), and no step waits for a signal. A distributed worker then lets the run go,
 * holding no slot for it, until `due` or until one of its calls ends.
 */
export function parkable(run: ActiveRun): Parkable | undefined {
  if (run.inflight.size === 0 || run.waiting.size > 0) return undefined;
  let due = Infinity;
  let calls = false;
  for (const node of run.inflight.keys()) {
    const step = run.loaded.compiled.nodes.get(node)?.node;
    const callsOnly =
      step?.kind === 'step' && step.action.type === 'execute' && step.action.itemType === 'tool';
    if (!callsOnly || run.children[node] !== undefined) return undefined;
    const rec = run.steps[node];
    if (rec?.retryAt === undefined) calls = true;
    due = Math.min(due, rec?.retryAt ?? rec?.deadline ?? Infinity);
  }
  const limit = run.directive.limits.durationSeconds;
  if (limit !== undefined) due = Math.min(due, clockStart(run.record) + limit * 1000);
  return { due: due === Infinity ? undefined : due, calls };
}
