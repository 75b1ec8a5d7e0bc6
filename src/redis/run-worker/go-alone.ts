/**
 * A run of a batch of starts going on in a job of its own (see `start-batch.ts`): when it parks,
 * when its worker closes, or when it cannot begin in the batch. The job is the run's start, marked
 * `alone` (the worker that takes it claims the run first and resumes it when it is stored), and its
 * id is the run's, as a start job's: BullMQ keeps one, and `status` and parked-run wakes find it.
 */
import type { Queue } from 'bullmq';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { startOfMember, type OneRunJobData, type RunJob, type RunJobData } from '../run-job.js';
import { RUN_JOB_RETENTION } from '../queue-options.js';

/** The start job of run `runId` of the batch `batch`, to go on alone. */
export function aloneJobData(batch: RunJobData, runId: string): OneRunJobData {
  const member = batch.kind === 'starts' ? batch.runs.find((m) => m.runId === runId) : undefined;
  if (batch.kind !== 'starts' || member === undefined)
    throw DirigentError.fatal(
      ErrorCode.INTERNAL,
      `Run ${runId} cannot go on in a job of its own: it is not in the batch of starts being driven.`,
      { hint: 'Report this: the worker lost track of which batch a run came in.' },
    );
  return { ...startOfMember(batch, member), alone: true };
}

/**
 * Adds the job in which run `runId` of the batch `job` goes on alone, waiting `delayMs` first
 * (0: at once); resolves with it (the one already there, when an earlier try added it).
 */
export async function goAlone(
  runs: Queue<RunJobData>,
  job: RunJob,
  runId: string,
  delayMs = 0,
): Promise<RunJob> {
  return (await runs.add('start', aloneJobData(job.data, runId), {
    jobId: runId,
    ...(delayMs > 0 && { delay: delayMs }),
    ...RUN_JOB_RETENTION,
  })) as RunJob;
}
