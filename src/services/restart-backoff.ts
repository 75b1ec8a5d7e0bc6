/** First delay before a `continuous` bootstrap tool is started again. */
export const RESTART_MIN_MS = 1_000;
/** Longest delay before a restart, reached after repeated failures. */
export const RESTART_MAX_MS = 30_000;
/** A run at least this long counts as healthy: the delay starts again from the shortest. */
export const STABLE_RUN_MS = 30_000;

/**
 * The delay before a stopped `continuous` tool is started again: 1 s, doubling with each failure
 * in a row up to 30 s; a run that lasted {@link STABLE_RUN_MS} or more resets it.
 */
export class RestartBackoff {
  private failures = 0;

  constructor(
    private readonly minMs = RESTART_MIN_MS,
    private readonly maxMs = RESTART_MAX_MS,
    private readonly stableMs = STABLE_RUN_MS,
  ) {}

  /** The delay after a run that lasted `ranMs` and returned (`failed` false) or failed. */
  next(failed: boolean, ranMs: number): number {
    if (ranMs >= this.stableMs) this.failures = 0;
    if (failed) this.failures++;
    const exponent = Math.max(0, this.failures - 1);
    return Math.min(this.maxMs, this.minMs * 2 ** Math.min(exponent, 30));
  }
}
