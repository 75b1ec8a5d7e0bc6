/**
 * Where the outcome of a tool job goes once BullMQ has recorded it: the result inbox of the
 * process that made the call; when no one listens there any more (that process is gone), the run
 * that made the call may be parked waiting for it, so it is woken.
 */
import type { Job, Queue } from 'bullmq';
import type { RedisClient } from '../redis-client.js';
import type { SerializedError } from '../../errors/dirigent-error.js';
import { wakeParked } from '../parked-runs.js';
import { inboxChannel } from '../result-inbox.js';
import type { RunJobData } from '../run-job.js';
import type { ToolJobData } from '../tool-job.js';

/** A tool job's outcome, as its caller hears it. */
export type ToolOutcome = { ok: true; value: unknown } | { ok: false; error: SerializedError };

/** Tells the caller of a finished tool job its outcome (see the module comment). */
export async function replyToCaller(
  redis: RedisClient,
  prefix: string,
  job: Job<ToolJobData>,
  outcome: ToolOutcome,
  runs: () => Queue<RunJobData>,
): Promise<void> {
  const to = job.data.replyTo;
  if (to === undefined) return;
  const runId = job.data.runId;
  const heard = await redis.publish(
    inboxChannel(prefix, to),
    JSON.stringify({ jobId: job.id, runId, ...outcome }),
  );
  if (heard === 0) await wakeParked(redis, prefix, runs(), runId);
}
