import type { QueueOptions } from 'bullmq';
import type { RedisClient } from './redis-client.js';

/** Events kept in each queue's events stream: enough for waiters, flat under continuous load. */
export const EVENTS_STREAM_MAX_LEN = 10_000;

/** The options every Dirigent queue is opened with. */
export function queueOptions(redis: RedisClient, prefix: string): QueueOptions {
  return { connection: redis, prefix, streams: { events: { maxLen: EVENTS_STREAM_MAX_LEN } } };
}

/**
 * The longest any finished job of a run (run jobs, wake jobs, tool jobs) is kept, seconds: a day,
 * for a failed one. It is shorter than the default retention of ended runs (7 days), so a run's
 * job data is gone before the run; a run kept for less has its finished jobs removed when it
 * expires (see `run-store/expired-run-jobs.ts`), and a store's prune removes any finished job
 * older than this, which BullMQ removes only when another job of its queue finishes.
 */
export const MAX_JOB_KEEP_SECONDS = 86_400;

/**
 * Finished run jobs leave BullMQ at once (whoever waits hears the outcome from the events stream;
 * the run record lives in the store); failed ones stay a while, for inspection, at most
 * {@link MAX_JOB_KEEP_SECONDS}.
 */
export const RUN_JOB_RETENTION = {
  removeOnComplete: true,
  removeOnFail: { age: MAX_JOB_KEEP_SECONDS, count: 1000 },
} as const;
