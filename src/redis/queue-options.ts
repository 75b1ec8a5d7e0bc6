import type { QueueOptions } from 'bullmq';
import type { Redis } from 'ioredis';

/** Events kept in each queue's events stream: enough for waiters, flat under continuous load. */
export const EVENTS_STREAM_MAX_LEN = 10_000;

/** The options every Dirigent queue is opened with. */
export function queueOptions(redis: Redis, prefix: string): QueueOptions {
  return { connection: redis, prefix, streams: { events: { maxLen: EVENTS_STREAM_MAX_LEN } } };
}

/**
 * Finished run jobs leave BullMQ at once (whoever waits hears the outcome from the events stream;
 * the run record lives in the store); failed ones stay a while, for inspection.
 */
export const RUN_JOB_RETENTION = {
  removeOnComplete: true,
  removeOnFail: { age: 86_400, count: 1000 },
} as const;
