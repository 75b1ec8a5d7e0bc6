import { ErrorCode } from '../errors/error-codes.js';

/**
 * How a step attempt or a tool call that failed ended, as spans and metrics say it
 * (`dirigent.step.outcome`, `dirigent.tool.outcome`).
 */
export function failureOutcome(error: { code: string }): 'timed_out' | 'cancelled' | 'failed' {
  if (error.code === ErrorCode.STEP_TIMEOUT) return 'timed_out';
  if (error.code === ErrorCode.CANCELLED) return 'cancelled';
  return 'failed';
}
