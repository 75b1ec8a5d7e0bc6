import type { RetryPolicy } from '../directive/ast.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { backoffDelay } from './backoff-delay.js';
import { callTimedOut } from '../errors/stop-errors.js';

/** How one unit of work is tried. */
export interface AttemptOptions {
  /** Retryable failures are tried again under this policy; undefined means one attempt. */
  policy: RetryPolicy | undefined;
  /** Each attempt is aborted with `timeoutError()` when it runs longer than this. */
  timeoutMs?: number | undefined;
  timeoutError?: () => DirigentError;
  /** Stops everything: the running attempt and the wait before the next. */
  signal: AbortSignal;
  /** Called before the wait that precedes a retry. */
  onRetry?: (error: DirigentError, attempt: number, delayMs: number) => void;
  /** The number of the first attempt (a resumed step goes on counting; default 1). */
  firstAttempt?: number;
  /** A wait before the first attempt (a resumed step that was waiting to retry: the rest of it). */
  firstDelayMs?: number | undefined;
  /** The first attempt's timeout, when it differs from `timeoutMs` (a resumed attempt: what is left). */
  firstTimeoutMs?: number | undefined;
  /** Attempts made before a redrive: the policy allows its attempts again after them. */
  spent?: number | undefined;
}

/** The outcome of {@link runAttempts}, with the number of attempts made. Never a rejection. */
export type AttemptOutcome<T> =
  | { ok: true; value: T; attempts: number }
  | { ok: false; error: DirigentError; attempts: number };

/**
 * Runs `work` until it succeeds, fails fatally, or the policy's attempts are spent, waiting the
 * backoff delay between tries. A timeout or the signal aborts the attempt's own signal, so the
 * running work (a process group, a child run) is stopped, not abandoned.
 */
export async function runAttempts<T>(
  work: (attempt: number, signal: AbortSignal) => Promise<T>,
  o: AttemptOptions,
): Promise<AttemptOutcome<T>> {
  const spent = o.spent ?? 0;
  const max = (o.policy?.attempts ?? 1) + spent;
  const first = o.firstAttempt ?? 1;
  if (o.firstDelayMs !== undefined && o.firstDelayMs > 0) {
    try {
      await sleep(o.firstDelayMs, o.signal);
    } catch (err) {
      return { ok: false, error: DirigentError.from(err), attempts: first - 1 };
    }
  }
  for (let attempt = first; ; attempt++) {
    let error: DirigentError;
    try {
      const timeoutMs = attempt === first ? (o.firstTimeoutMs ?? o.timeoutMs) : o.timeoutMs;
      return { ok: true, value: await timed(work, attempt, o, timeoutMs), attempts: attempt };
    } catch (err) {
      error = DirigentError.from(o.signal.aborted ? o.signal.reason : err);
    }
    if (!error.retryable || attempt >= max || o.signal.aborted)
      return { ok: false, error, attempts: attempt };
    const delay = backoffDelay(o.policy!, attempt - spent);
    o.onRetry?.(error, attempt, delay);
    try {
      await sleep(delay, o.signal);
    } catch (err) {
      return { ok: false, error: DirigentError.from(err), attempts: attempt };
    }
  }
}

async function timed<T>(
  work: (attempt: number, signal: AbortSignal) => Promise<T>,
  attempt: number,
  o: AttemptOptions,
  timeoutMs: number | undefined,
): Promise<T> {
  if (timeoutMs === undefined) return work(attempt, o.signal);
  const controller = new AbortController();
  const onStop = () => controller.abort(o.signal.reason);
  o.signal.addEventListener('abort', onStop, { once: true });
  const timeoutError = o.timeoutError ?? (() => callTimedOut('The work', timeoutMs));
  const timer = setTimeout(() => controller.abort(timeoutError()), timeoutMs);
  try {
    return await work(attempt, controller.signal);
  } catch (err) {
    throw controller.signal.aborted ? controller.signal.reason : err;
  } finally {
    clearTimeout(timer);
    o.signal.removeEventListener('abort', onStop);
  }
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
