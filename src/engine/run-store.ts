import type { StepRecord } from '../compiler/run-context.js';
import type { RunRecord } from './run-record.js';
import type { RunCounters } from './run-counters.js';
import type { RunTrace } from '../telemetry/run-trace.js';

/** Everything needed to resume a run in another process. */
export interface StoredRun {
  record: RunRecord;
  /** The machine's persisted xstate snapshot. */
  snapshot: unknown;
  /**
   * The directive's file and exact text, so a resumed run follows the definition it started with;
   * `hash`, when known, is the text's `contentHash` (a store that keeps each text once uses it).
   */
  source: { file: string; text: string; hash?: string };
  projectDir: string;
  /** Nesting depth: 0 for a run started by a trigger, parent + 1 for a child directive. */
  depth: number;
  parentRunId: string | null;
  /** Child runs started by this run, by the step that started them. */
  children: Record<string, string>;
  /** Step records, kept beside the snapshot. */
  steps: Record<string, StepRecord>;
  /** Node entries so far (for `max_steps`) and child runs started (for `spawns`). */
  counters: RunCounters;
  /** The run's place in a trace, once a process with telemetry started or resumed it. */
  trace?: RunTrace;
  /** Content hashes of the tools the run's submitter resolved (see `redis/run-job.ts`). */
  tools?: Record<string, string>;
  /**
   * Of a run that failed or was cancelled (or is compensating), the machine's snapshot from just
   * before: in the steps that failed or were under way. A redrive goes on from it.
   */
  redrivePoint?: unknown;
}

/**
 * Where runs are kept. The embedded engine uses {@link MemoryRunStore} and, for runs that wait,
 * {@link FileRunStore}; the distributed engine stores runs in Redis behind this same port.
 */
export interface RunStore {
  save(run: StoredRun): Promise<void>;
  load(runId: string): Promise<StoredRun | undefined>;
  /** Runs, newest first. */
  list(): Promise<RunRecord[]>;
}
