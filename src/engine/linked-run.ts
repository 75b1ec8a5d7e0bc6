import type { RunRecord } from './run-record.js';

/**
 * Another run live in the same process, as a run sees it: its parent (which it marks running
 * again, or asks to check whether it now only waits) or one of its children (whose waits it
 * reports as its own, and whose end settles the step that started it).
 */
export interface LinkedRun {
  readonly runId: string;
  readonly record: RunRecord;
  /** True while the run waits for a signal, itself or through a child directive. */
  readonly isWaiting: boolean;
  /** Resolves when the run ends (completed, failed or cancelled), however long it waits. */
  finished(): Promise<RunRecord>;
  /** Marks the run (and the parents waiting through it) as running again. */
  resumeRunning(): void;
  /** Soon after the current event: does the run now only wait for signals? */
  queueIdleCheck(): void;
}
