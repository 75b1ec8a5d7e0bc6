/**
 * Errors across the queue: a worker fails a job with the `DirigentError` serialised in the
 * message (fatal ones as BullMQ's `UnrecoverableError`, so BullMQ never retries them), and the
 * side waiting for the job reads it back, code, retryability and details intact.
 */
import { UnrecoverableError } from 'bullmq';
import { DirigentError, type SerializedError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

const MARK = 'dirigent-error:';

/** The error a job processor throws for `err`. */
export function toJobError(err: unknown): Error {
  const e = DirigentError.from(err);
  const message = MARK + JSON.stringify(e.toJSON());
  return e.retryable ? new Error(message) : new UnrecoverableError(message);
}

/** The `DirigentError` behind a failed job's `failedReason` (or any rejection of waiting on it). */
export function fromJobError(reasonOrError: unknown, what: string): DirigentError {
  const reason =
    reasonOrError instanceof Error ? reasonOrError.message : String(reasonOrError ?? '');
  const at = reason.indexOf(MARK);
  if (at !== -1) {
    try {
      return DirigentError.fromJSON(JSON.parse(reason.slice(at + MARK.length)) as SerializedError);
    } catch {
      // fall through: not ours after all
    }
  }
  return DirigentError.retryable(ErrorCode.INTERNAL, `${what} failed on a worker: ${reason}`);
}
