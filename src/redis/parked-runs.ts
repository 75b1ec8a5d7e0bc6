/**
 * Runs let go while their tool jobs run elsewhere ("parked"): the run's job waits in the delayed
 * set until its next deadline (a step's timeout, a retry, the run's limit, or a check-in), and a
 * key says which job that is. The outcome of one of its tool jobs wakes it: whoever hears the
 * outcome first and finds no call waiting for it (the worker that drove the run, or the tool's
 * worker when no one listens any more) promotes that job, and a worker resumes the run, which
 * takes the outcome from the finished job.
 */
import { Job, type Queue } from 'bullmq';
import type { RedisClient } from './redis-client.js';
import type { RunJobData } from './run-job.js';

/**
 * How long a parked run waits at most before a worker looks at it again, when no deadline comes
 * sooner: the backstop for a wake that was lost with the process that should have sent it.
 */
export const PARKED_CHECK_IN_MS = 5 * 60_000;

/** The key naming the delayed job of a parked run. */
export function parkedKey(prefix: string, runId: string): string {
  return `${prefix}:parked:${runId}`;
}

/** How long the key outlives its run's due time: a late wake finds nothing and does nothing. */
const KEY_SLACK_MS = 60_000;

/** Records that the run's job `jobId` is delayed while its tool jobs run. */
export async function markParked(
  redis: RedisClient,
  prefix: string,
  runId: string,
  jobId: string,
  untilMs: number,
): Promise<void> {
  await redis.set(
    parkedKey(prefix, runId),
    jobId,
    'PX',
    Math.max(1, untilMs - Date.now()) + KEY_SLACK_MS,
  );
}

/**
 * Wakes a parked run at once: its delayed job moves to the wait list. Does nothing when the run
 * is not parked (or another waker came first); resolves whether it woke the run.
 */
export async function wakeParked(
  redis: RedisClient,
  prefix: string,
  runs: Queue<RunJobData>,
  runId: string,
): Promise<boolean> {
  const jobId = await redis.getdel(parkedKey(prefix, runId));
  if (jobId === null) return false;
  const job = await Job.fromId(runs, jobId);
  if (job === undefined) return false;
  try {
    await job.promote();
    return true;
  } catch {
    return false; // no longer delayed: a worker has it already
  }
}

/**
 * Wakes the parked run `runId`, whose delayed job is `job`, at once, whoever holds the mark: the
 * run worker that parked it, when one of its calls ended before the job was delayed.
 */
export async function promoteParked(
  redis: RedisClient,
  prefix: string,
  job: Job,
  runId: string,
): Promise<void> {
  await redis.del(parkedKey(prefix, runId));
  await job.promote().catch(() => {
    /* No longer delayed (a waker came first) or gone: the run is on its way already. Were Redis
       away, the job still comes due at its own time. */
  });
}
