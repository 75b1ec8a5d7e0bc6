/**
 * Waiting for what a test waits for, never for a fixed time: a condition polled until it holds,
 * with a deadline, failing with a message that names what did not happen.
 */

/** How {@link waitFor} polls. */
export interface WaitForOptions {
  /** What the test waits for, as the failure message names it ("the takeover", "3 ticks"). */
  what: string;
  /** How long to wait before failing (default 10,000 ms). */
  timeoutMs?: number;
  /** Milliseconds between two checks (default 20). */
  intervalMs?: number;
}

/**
 * Resolves with the first value of `condition` that is neither `false`, `undefined`, `null`, `0`
 * nor `''`, checking at once and then every `intervalMs`; rejects after `timeoutMs` with
 * `Timed out after … waiting for <what>` (and the last error the condition threw, if it threw).
 * A condition that throws is checked again: it fails only when the deadline passes.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: WaitForOptions,
): Promise<Exclude<T, false | undefined | null | 0 | ''>> {
  const { what, timeoutMs = 10_000, intervalMs = 20 } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value as Exclude<T, false | undefined | null | 0 | ''>;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const why = lastError === undefined ? '' : ` (last check threw: ${String(lastError)})`;
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
