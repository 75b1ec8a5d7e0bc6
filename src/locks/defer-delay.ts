/**
 * When a job that could not get its concurrency slot or its rate is tried again. The job is
 * deferred (re-scheduled with this delay), never parked on a worker slot while it waits.
 */

/** What the caller knows about the job being deferred. */
export interface DeferState {
  /** How many times the job was deferred before this time (0 the first time). */
  deferrals: number;
  /**
   * How long the job has waited so far, in ms: now minus the time of its first deferral, which
   * the job keeps in its data across deferrals. Default 0.
   */
  waitedMs?: number;
  /** The rate limiter's `retryAfterMs`, when a rate refused the job: no try comes before it. */
  retryAfterMs?: number;
}

/** The tuning of {@link deferDelay}; the defaults suit jobs of a few ms to a few s. */
export interface DeferDelayOptions {
  /** The first deferral's ceiling, in ms. Default 50. */
  baseMs?: number;
  /** The largest ceiling, in ms, whatever the number of deferrals. Default 5000. */
  maxMs?: number;
  /** After this long waiting, a job is tried as eagerly as a new one, in ms. Default 30 000. */
  agingMs?: number;
  /** A number in [0, 1); default `Math.random`. Tests pass their own. */
  random?: () => number;
}

/** The defaults of {@link DeferDelayOptions}. */
export const DEFER_DEFAULTS = { baseMs: 50, maxMs: 5_000, agingMs: 30_000 } as const;

/**
 * The delay, in ms (an integer of at least 1), after which a deferred job is tried again.
 *
 * Backoff: the ceiling is `baseMs · 2^deferrals`, capped at `maxMs` (50 ms, 100 ms, 200 ms, …
 * 5 s), and the delay is drawn in `[ceiling / 2, ceiling)` ("equal jitter"), so jobs deferred
 * together spread out instead of trying again in one herd, while the delay still grows.
 *
 * No starvation, by two rules:
 * - bounded wait between tries: a deferred job is always tried again within `maxMs` (or, when a
 *   rate refused it, within `maxMs` after its `retryAfterMs`): it is never forgotten, whatever the
 *   number of deferrals;
 * - aging: plain backoff favours newcomers (they try every 50 ms while old jobs try every 5 s), so
 *   once a job has waited `agingMs` since its first deferral (the job keeps that timestamp), its
 *   ceiling drops back to `baseMs`: it tries as often as the most eager newcomer, and more often
 *   than every job younger than it that has been deferred a few times, so a freed slot goes to the
 *   long waiters first with high probability.
 * The guarantee is probabilistic, not FIFO: a strict order would need a queue of waiters in Redis.
 *
 * When a rate limit refused the job (`retryAfterMs`), the delay is at least `retryAfterMs` plus a
 * jitter of up to `baseMs`: trying before the window frees a place is pointless.
 */
export function deferDelay(state: DeferState, options: DeferDelayOptions = {}): number {
  const baseMs = Math.max(1, options.baseMs ?? DEFER_DEFAULTS.baseMs);
  const maxMs = Math.max(baseMs, options.maxMs ?? DEFER_DEFAULTS.maxMs);
  const agingMs = options.agingMs ?? DEFER_DEFAULTS.agingMs;
  const random = options.random ?? Math.random;

  const deferrals = Number.isFinite(state.deferrals) ? Math.max(0, Math.floor(state.deferrals)) : 0;
  const aged = (state.waitedMs ?? 0) >= agingMs;
  const ceiling = aged ? baseMs : Math.min(maxMs, baseMs * 2 ** Math.min(deferrals, 40));
  const r = clamp01(random());
  let delay = ceiling / 2 + (r * ceiling) / 2;
  if (state.retryAfterMs !== undefined && state.retryAfterMs > 0)
    delay = Math.max(delay, state.retryAfterMs + r * baseMs);
  return Math.max(1, Math.floor(delay));
}

function clamp01(n: number): number {
  return Number.isFinite(n) ? Math.min(Math.max(n, 0), 0.999_999) : 0;
}
