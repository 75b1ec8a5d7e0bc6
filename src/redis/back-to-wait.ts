/**
 * Putting an active run job back in the queue for any worker to take, at once. BullMQ's
 * `moveToWait` puts a job with a priority (every start job has one, see
 * `engine/run-priority.ts`) back in the prioritized set without the marker a blocked worker waits
 * on, so no worker would see it until its wait for jobs timed out (seconds): the marker is added
 * here, as BullMQ adds it for a job it adds.
 */
import type { Job, Queue } from 'bullmq';
import type { RedisClient } from './redis-client.js';

/** Moves `job` (active, held with `token`) back to wait in `queue`, and wakes its workers. */
export async function backToWait(
  job: Job,
  token: string | undefined,
  queue: Queue,
  redis: RedisClient,
): Promise<void> {
  await job.moveToWait(token);
  if ((job.opts.priority ?? 0) > 0) await redis.zadd(queue.keys.marker!, 0, '0');
}
