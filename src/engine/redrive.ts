/**
 * Redrive (DESIGN.md, "Operating runs"): a run that failed or was cancelled goes on under the same
 * id from where it stopped. A run keeps, from the moment its machine left its steps, the snapshot
 * just before (`StoredRun.redrivePoint`): in the step that failed, or the steps under way when it
 * was cancelled or timed out. A redrive makes that snapshot the run's again and marks those steps
 * as interrupted, so the engine restarts them as it restarts the steps of a run whose process
 * died: the steps that completed keep their results and do not run again.
 *
 * A redriven step's attempts go on counting (its next attempt is a new call, never the answer of
 * the old one), and its `<retry>` allows as many attempts again. The run's time limit counts
 * from the redrive. Each redrive is kept in the record (`redrives`).
 */
import type { CompiledNode } from '../compiler/compiled-directive.js';
import type { RunContext, StepRecord } from '../compiler/run-context.js';
import { ErrorCode } from '../errors/error-codes.js';
import { runNotRedrivable } from '../errors/run-errors.js';
import { COMPENSATE_PREFIX } from '../directive/process-node.js';
import type { RedriveEntry, RunRecord } from './run-record.js';
import type { StoredRun } from './run-store.js';

/** Who asks for a redrive, and when. */
export interface RedriveRequest {
  by: string;
  at: number;
}

/** The machine snapshot as it is stored: its state value and context. */
interface PersistedSnapshot {
  value: unknown;
  context: RunContext;
}

/**
 * Why the run cannot be redriven, or undefined when it can. Only a failed or cancelled run can;
 * not one whose compensations ran (what its steps did was undone: rerun it instead), nor one
 * that stopped before any step or for having taken too many (it would stop again).
 */
export function redriveRefusal(record: RunRecord, hasPoint: boolean): string | undefined {
  const { status } = record;
  if (status === 'completed') return 'it completed';
  if (status === 'waiting') return 'it waits for a signal: send it (`dirigent signal`)';
  if (status === 'running' || status === 'queued') return `it is ${status}`;
  if (record.steps.some((s) => s.name.startsWith(COMPENSATE_PREFIX)))
    return 'its compensations ran, undoing what its steps did: rerun it from a step instead (`dirigent rerun`)';
  if (record.error?.code === ErrorCode.MAX_STEPS_EXCEEDED)
    return 'it took more steps than its <limits max_steps>, and would again: raise the limit and start it again';
  if (!hasPoint) return 'it stopped before any step ran';
  return undefined;
}

/**
 * The stored run as a redrive leaves it, ready to be restored as an interrupted run: running
 * again in its redrive point, its failed or stopped steps marked running (and their child runs,
 * which failed with them, forgotten: the step starts a new one), its error cleared and the
 * redrive noted. Throws `RUN_NOT_REDRIVABLE` (see {@link redriveRefusal}).
 */
export function redrivenRun(
  stored: StoredRun,
  nodes: ReadonlyMap<string, CompiledNode>,
  request: RedriveRequest,
): StoredRun {
  const { record } = stored;
  const point = stored.redrivePoint as PersistedSnapshot | undefined;
  const refusal = redriveRefusal(record, point !== undefined);
  if (refusal !== undefined) throw runNotRedrivable(record.runId, record.status, refusal);
  const steps = { ...stored.steps };
  const children = { ...stored.children };
  const counters = { ...stored.counters };
  const redriven: string[] = [];
  for (const name of stateNames(point!.value)) {
    const rec = steps[name];
    if (nodes.get(name)?.node.kind !== 'step' || rec === undefined) continue;
    if (rec.status === 'completed' || rec.status === 'skipped') continue;
    steps[name] = restarted(rec, request.at);
    redriven.push(name);
    if (children[name] !== undefined) {
      delete children[name];
      counters.spawns = Math.max(0, (counters.spawns ?? 0) - 1);
    }
  }
  const entry: RedriveEntry = {
    at: request.at,
    by: request.by,
    steps: redriven,
    status: record.status as RedriveEntry['status'],
    error: record.error,
  };
  const next: StoredRun = {
    ...stored,
    record: {
      ...record,
      status: 'running',
      outputs: null,
      error: null,
      endedAt: null,
      redrives: [...(record.redrives ?? []), entry],
    },
    snapshot: point,
    steps,
    children,
    counters,
  };
  delete next.redrivePoint;
  delete next.record.waiting;
  return next;
}

/** A failed or stopped step, as one whose attempt under way was interrupted: its next attempt. */
function restarted(rec: StepRecord, at: number): StepRecord {
  const next: StepRecord = {
    ...rec,
    status: 'running',
    result: null,
    error: null,
    attempts: rec.attempts + 1,
    redriven: rec.attempts,
    startedAt: at,
    endedAt: null,
  };
  delete next.retryAt;
  delete next.deadline;
  delete next.runsOn;
  return next;
}

/** Every state name in a machine's state value (nested objects for blocks and branches). */
function stateNames(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (value !== null && typeof value === 'object')
    for (const [key, inner] of Object.entries(value)) {
      into.push(key);
      stateNames(inner, into);
    }
  return into;
}
