/** The error a tool rejects with when its signal aborts. */
import { DirigentError } from '../errors/index.js';
import { cancelled } from '../errors/stop-errors.js';

/**
 * The error to reject with once `signal` is aborted: its reason when that is a `DirigentError`
 * (so a step timeout surfaces as `STEP_TIMEOUT`), else a fatal `CANCELLED`.
 */
export function abortError(signal: AbortSignal, what: string): DirigentError {
  const reason: unknown = signal.reason;
  if (reason instanceof DirigentError) return reason;
  return cancelled(what, undefined, reason);
}
