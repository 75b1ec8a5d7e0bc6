/**
 * Run priorities: 1 to 10, higher first when workers are busy, start order within a priority. A
 * start's own priority wins over its directive's `<priority>`; without either a run has
 * {@link DEFAULT_PRIORITY}. On Redis a run's start job carries it as BullMQ's priority (lower
 * first there, and a job with none before every job with one: so every start job has one, and
 * the jobs that steer runs under way, signals, cancels and wakes, go before any start).
 */
import { PRIORITY_RANGE } from '../directive/run-settings.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/** A run's priority when neither its start nor its directive sets one. */
export const DEFAULT_PRIORITY = 5;

/** BullMQ's priority for a run of `priority` (undefined: the default): 1 for 10, 10 for 1. */
export function jobPriority(priority: number | undefined): number {
  return PRIORITY_RANGE.max + 1 - (priority ?? DEFAULT_PRIORITY);
}

/** BullMQ's priority of a start with no priority of its own (groups of starts have it). */
export const DEFAULT_JOB_PRIORITY = jobPriority(undefined);

/** `priority` when it is one (a whole number from 1 to 10); `INVALID_REQUEST` otherwise. */
export function checkPriority(priority: unknown): number {
  if (
    typeof priority === 'number' &&
    Number.isInteger(priority) &&
    priority >= PRIORITY_RANGE.min &&
    priority <= PRIORITY_RANGE.max
  )
    return priority;
  throw DirigentError.fatal(
    ErrorCode.INVALID_REQUEST,
    `Priority ${JSON.stringify(priority)} is not a whole number from ${PRIORITY_RANGE.min} to ${PRIORITY_RANGE.max}.`,
    { hint: `Give 1 (last) to 10 (first); without one a run has ${DEFAULT_PRIORITY}.` },
  );
}
