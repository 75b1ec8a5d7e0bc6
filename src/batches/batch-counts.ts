/**
 * The counts of a batch, shared by its live progress and its final summary.
 */

/** How far a batch has got. */
export interface BatchCounts {
  /** Inputs with a result (completed or failed). */
  done: number;
  completed: number;
  failed: number;
  running: number;
  /** Inputs with a result from an earlier attempt, not run again. */
  skipped: number;
  /** Records read so far (skipped ones included). */
  read: number;
  /** Inputs whose run waits for a signal (shown when there are some). */
  waiting?: number;
}
