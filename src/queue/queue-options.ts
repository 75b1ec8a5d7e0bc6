import type { QueueOptions } from 'bullmq';
import type { Redis } from 'ioredis';

/** Events kept in each queue's events stream: enough for waiters, flat under continuous load. */
export const EVENTS_STREAM_MAX_LEN = 10_000;

/** The options every Dirigent queue is opened with. */
export function queueOptions(redis: Redis, prefix: string): QueueOptions {
  return { connection: redis, prefix, streams: { events: { maxLen: EVENTS_STREAM_MAX_LEN } } };
}
