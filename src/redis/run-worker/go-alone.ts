/**
 * A run of a group of starts going on in a job of its own (see `start-group.ts`): when it parks,
 * when its worker closes, or when it cannot begin in the group. The job is the run's start, marked
 * `alone` (the worker that takes it claims the run first and resumes it when it is stored), and its
 * id is the run's, as a start job's: BullMQ keeps one, and `status` and parked-run wakes find it.
 */
import type { Queue } from 'bullmq';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { startOfMember, type OneRunJobData, type RunJob, type RunJobData } from '../run-job.js';
import { RUN_JOB_RETENTION } from '../queue-options.js';

/** The start job of run `runId` of the group `group`, to go on alone. */
export function aloneJobData(group: RunJobData, runId: string): OneRunJobData {
  const member = group.kind === 'starts' ? group.runs.find((m) => m.runId === runId) : undefined;
  if (group.kind !== 'starts' || member === undefined)
    throw DirigentError.fatal(
      ErrorCode.INTERNAL,
      `Run ${runId} cannot go on in a job of its own: it is not in the group of starts being driven.`,
      { hint: 'Report this: the worker lost track of which group a run came in.' },
    );
  return { ...startOfMember(group, member), alone: true };
}

/**
 * Adds the job in which run `runId` of the group `job` goes on alone, waiting `delayMs` first
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
