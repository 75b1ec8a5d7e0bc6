/**
 * How a tool job stops short of running to its end on a worker: deferred (its gate is closed),
 * stopped at its step's deadline, or cancelled; and the job ids a worker remembers meanwhile.
 */
import { DelayedError, type Job } from 'bullmq';
import { DirigentError } from '../../errors/dirigent-error.js';
import { deferDelay } from '../../locks/defer-delay.js';
import type { ToolJobData } from '../tool-job.js';
import { cancelled, stepTimedOut } from '../../errors/stop-errors.js';

/**
 * Job ids a worker remembers per kind (cancellations: a job is taken up within moments of its
 * cancel, or never; outcomes handed over: forgotten when BullMQ reports the job, which a lost lock
 * can prevent).
 */
const REMEMBERED = 10_000;

/** Adds `id` to `ids`, forgetting the oldest beyond {@link REMEMBERED}. */
export function remember(ids: Set<string>, id: string): void {
  ids.add(id);
  if (ids.size > REMEMBERED) ids.delete(ids.values().next().value!);
}

/** Puts a job that could not pass its gate back in the delayed set, freeing its worker's slot. */
export async function deferJob(
  job: Job<ToolJobData>,
  token: string | undefined,
  retryAfterMs: number | undefined,
): Promise<never> {
  const deferrals = job.data.deferrals ?? 0;
  const firstDeferredAt = job.data.firstDeferredAt ?? Date.now();
  const delay = deferDelay({
    deferrals,
    waitedMs: Date.now() - firstDeferredAt,
    ...(retryAfterMs !== undefined && { retryAfterMs }),
  });
  await job.updateData({ ...job.data, deferrals: deferrals + 1, firstDeferredAt });
  await job.moveToDelayed(Date.now() + delay, token);
  throw new DelayedError();
}

/**
 * Aborts the call at its deadline (at once if that has passed) with the step's timeout error:
 * the tool stops on time even when the process that made the call is gone.
 */
export function stopAt(
  deadline: number,
  controller: AbortController,
  step: string,
): NodeJS.Timeout {
  const timeout = () =>
    controller.abort(stepTimedOut(step, { stoppedBy: 'the worker running its tool' }));
  return setTimeout(timeout, Math.max(0, deadline - Date.now()));
}

/** The error of a cancelled tool job. */
export function jobCancelled(jobId: string): DirigentError {
  return cancelled(`Tool job ${jobId}`);
}
