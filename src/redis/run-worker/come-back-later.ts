/**
 * A run job that cannot be done now (its run is driven by another worker, or Redis went away
 * mid-job) comes back a moment later, holding no worker slot meanwhile: its job is delayed, with a
 * delay that grows from 50 ms to 2 s.
 */
import { DelayedError } from 'bullmq';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import type { RunJob } from '../run-job.js';

/** How many times a run job is taken up at most before an error fails it for good. */
const MAX_TAKEN_UP = 200;

/** Delays the job a moment; throws BullMQ's `DelayedError` (the job is no longer this worker's). */
export async function comeBackLater(job: RunJob, token: string | undefined): Promise<never> {
  const delay = Math.min(2000, 50 * 2 ** Math.min(6, Math.max(0, job.attemptsStarted - 1)));
  await job.moveToDelayed(Date.now() + delay, token);
  throw new DelayedError();
}

/** Whether the job may still come back after an error, rather than fail. */
export function mayComeBack(job: RunJob): boolean {
  return job.attemptsStarted < MAX_TAKEN_UP;
}

/** What Redis and ioredis say while Redis is away, restarting or still loading its data. */
const REDIS_AWAY =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Connection is closed|Stream isn't writeable|MaxRetriesPerRequest|^LOADING|^READONLY|^TRYAGAIN/;

/** Whether an error is Redis (or the network) failing for a while, not the job's own fault. */
export function transient(err: unknown): boolean {
  if (err instanceof DirigentError) {
    if (err.code !== ErrorCode.INTERNAL) return err.retryable;
    return err.cause instanceof Error && REDIS_AWAY.test(err.cause.message);
  }
  return err instanceof Error && (REDIS_AWAY.test(err.message) || REDIS_AWAY.test(err.name));
}
