/**
 * What a run job asks of the worker that took it up (see `run-job.ts`): start a run, deliver a
 * signal, cancel a run, or wake one at a deadline, each on the run as claimed from the store.
 */
import type { ActiveRun } from '../engine/active-run.js';
import type { RunRecord } from '../engine/run-record.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { driveToRest, type DriveContext, type TakenJob } from './drive-to-rest.js';
import type { TakenUp } from './job-spans.js';
import type { VersionedRun } from './run-hash.js';
import type { OneRunJobData } from './run-job.js';
import { loadRunDirective } from './run-source.js';

/**
 * Does what the job asks. `stored`: the run as claimed (none for a start taken up the first
 * time). `takenUp` says how the job came here (a takeover, a resume after it was handed back,
 * parked or lost with its worker, or its first delivery).
 */
export async function performRunJob(
  ctx: DriveContext,
  data: OneRunJobData,
  stored: VersionedRun | undefined,
  taken: TakenJob,
  takenUp: TakenUp,
): Promise<RunRecord> {
  const engine = ctx.engine;
  const redelivered = takenUp === 'takeover' || takenUp === 'resume';
  const over = stored && !['running', 'waiting'].includes(stored.record.status);
  const drive = (run: ActiveRun) => driveToRest(ctx, run, taken, takenUp);
  let record: RunRecord;
  switch (data.kind) {
    case 'start':
      if (over) return stored.record; // delivered again after it ended
      record = await drive(
        stored
          ? await engine.resume(data.runId)
          : engine.start(await loadRunDirective(engine.loader, data.source), data.inputs, {
              runId: data.runId,
              trigger: data.trigger ?? 'queue',
              ...(data.trace && { trace: data.trace }),
              ...(data.source.tools && { tools: data.source.tools }),
            }),
      );
      break;
    case 'signal': {
      let run: ActiveRun;
      if (redelivered && stored?.record.status === 'running') {
        // This job delivered its signal before it was handed back, parked or lost with its
        // worker: the run goes on from its stored state (unless it waits for the signal still).
        run = await engine.resume(data.runId);
        if (engine.waitsFor(run, data.name))
          run = await engine.deliverSignal(data.runId, data.name, data.payload);
      } else run = await engine.deliverSignal(data.runId, data.name, data.payload);
      record = await drive(run);
      break;
    }
    case 'cancel':
      if (over) return stored.record;
      // A run no worker drives (parked, or its worker died) may have tool jobs running: resumed,
      // its calls are made again, and cancelling stops their jobs wherever they run.
      if (stored?.record.status === 'running') await engine.resume(data.runId);
      record = await engine.cancelRun(data.runId, data.reason);
      break;
    case 'wake':
      if (over || stored === undefined) return stored?.record ?? notFound(data.runId);
      record = await drive(await engine.resume(data.runId));
      break;
  }
  if (record.status === 'waiting') await scheduleWake(ctx, data, record);
  return record;
}

/** A waiting run's next deadline becomes a delayed wake job (one per deadline: idempotent). */
async function scheduleWake(
  ctx: DriveContext,
  data: OneRunJobData,
  record: RunRecord,
): Promise<void> {
  const deadlines = (record.waiting ?? []).flatMap((w) => (w.deadline ? [w.deadline] : []));
  const limit = ctx.engine.activeRun(data.runId)?.directive.limits.durationSeconds;
  if (limit !== undefined) deadlines.push(record.startedAt + limit * 1000);
  if (deadlines.length === 0) return;
  const at = Math.min(...deadlines);
  await ctx.runsQueue.add(
    'wake',
    { kind: 'wake', runId: data.runId },
    {
      jobId: `${data.runId}.wake.${at}`,
      delay: Math.max(0, at - Date.now()),
      removeOnComplete: { age: 3600, count: 1000 },
      removeOnFail: { age: 86_400, count: 1000 },
    },
  );
}

function notFound(runId: string): never {
  throw DirigentError.fatal(ErrorCode.RUN_NOT_FOUND, `No run with id ${runId}.`);
}
