import type { StepRecord } from '../compiler/run-context.js';
import type { AttemptOptions } from './run-attempts.js';

/**
 * Where a step's attempts go on from, given its stored record at `now`: a step that waited to
 * retry makes its next attempt when that is due (only the rest of the delay is waited out); one
 * stopped in the middle of an attempt tries that attempt again, keeping its deadline (the time
 * already spent counts). A step that just started has neither, and begins at its first attempt.
 */
export function resumedAttempts(
  rec: Pick<StepRecord, 'attempts' | 'retryAt' | 'deadline'>,
  now: number,
): Required<Pick<AttemptOptions, 'firstAttempt'>> &
  Pick<AttemptOptions, 'firstDelayMs' | 'firstTimeoutMs'> {
  if (rec.retryAt !== undefined)
    return { firstAttempt: rec.attempts + 1, firstDelayMs: Math.max(0, rec.retryAt - now) };
  return {
    firstAttempt: rec.attempts,
    firstTimeoutMs: rec.deadline === undefined ? undefined : Math.max(0, rec.deadline - now),
  };
}
