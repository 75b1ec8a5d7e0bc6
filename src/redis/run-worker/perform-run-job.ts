/**
 * What a run job asks of the worker that took it up (see `run-job.ts`): start a run, deliver a
 * signal, cancel a run, or wake one at a deadline, each on the run as claimed from the store. A
 * run of a group of starts is taken up the same way (see `start-group.ts`).
 */
import { DelayedError, WaitingError } from 'bullmq';
import type { ActiveRun } from '../../engine/active-run.js';
import { clockStart, hasEnded, type RunRecord } from '../../engine/run-record.js';
import { runNotFound } from '../../errors/run-errors.js';
import { traceFields } from '../../telemetry/logger.js';
import { comeBackLater, mayComeBack, transient } from './come-back-later.js';
import { driveToRest, runTree, type DriveContext, type TakenJob } from './drive-to-rest.js';
import { toJobError } from '../job-error.js';
import type { TakenUp } from '../job-spans.js';
import type { VersionedRun } from '../run-store/run-hash.js';
import type { OneRunJobData } from '../run-job.js';
import { loadRunDirective } from '../run-source.js';
import { pausedIn } from '../../operations/pause.js';
import { runConcurrencyOf } from '../../engine/run-concurrency.js';
import { SLOT_WAIT_SAFETY_MS } from '../concurrency-slots.js';
import { goAlone } from './go-alone.js';
import { RUN_JOB_RETENTION } from '../queue-options.js';

/**
 * Takes the run of a job up: claims it (a start taken up the first time has nothing stored, and
 * claims nothing), does what the job asks, and lets the run go. A job that cannot be done now
 * comes back later; for a run of a group (`taken.shared`), which has no job to move, the errors
 * say what happened (see `start-group.ts`): `DelayedError` when another job has the run,
 * `WaitingError` when this worker lost it, and any other error as it is.
 */
export async function takeUpRun(
  ctx: DriveContext,
  data: OneRunJobData,
  taken: TakenJob,
  redelivered: boolean,
): Promise<RunRecord> {
  const { job, token, shared } = taken;
  try {
    const claim =
      data.kind === 'start' && !redelivered
        ? undefined
        : await ctx.store.claim(data.runId, data.kind === 'redrive');
    if (claim?.status === 'busy')
      return await (shared ? Promise.reject(new DelayedError()) : comeBackLater(job, token));
    const stored = claim?.status === 'claimed' ? claim.run : undefined;
    const from = claim?.status === 'claimed' ? claim.takenOverFrom : undefined;
    const takenUp: TakenUp =
      from !== undefined || job.stalledCounter > 0
        ? 'takeover'
        : redelivered
          ? 'resume'
          : data.kind;
    if (takenUp === 'takeover' && stored) {
      ctx.log.info(
        { ...traceFields(data.runId, stored.trace), directive: stored.record.directive },
        `took over run ${data.runId}: the worker that drove it (${from ?? 'unknown'}) stopped`,
      );
      ctx.events('run:taken-over', {
        runId: data.runId,
        directive: stored.record.directive,
        worker: ctx.worker,
        ...(from !== undefined && { previousWorker: from }),
        cause: from !== undefined ? 'lease-lapsed' : 'stalled',
      });
    }
    const record = await performRunJob(ctx, data, stored, taken, takenUp);
    await letGo(ctx, data.runId, record);
    return record;
  } catch (err) {
    if (err instanceof WaitingError || err instanceof DelayedError) throw err;
    await letGo(ctx, data.runId).catch(() => {
      // Letting go failed too (Redis away): the claim lapses with this worker's lease, and the
      // job's own failure, thrown below, is what its caller hears.
    });
    if (shared) throw err;
    // Redis went away mid-job (restarting, say): the run is as last stored; the job comes back.
    if (transient(err) && mayComeBack(job)) {
      ctx.log.warn(
        { run_id: data.runId, err: String(err) },
        `run job of ${data.runId} comes back later: ${String(err)}`,
      );
      return await comeBackLater(job, token);
    }
    throw toJobError(err);
  }
}

/**
 * After a job: an ended run has no owner any more (its last save cleared it); one that waits
 * (or a job that failed) is let go, so that the next job of it is taken up at once anywhere.
 */
async function letGo(ctx: DriveContext, runId: string, record?: RunRecord): Promise<void> {
  const tree = runTree(ctx.engine, runId);
  ctx.engine.releaseRun(runId);
  if (record !== undefined && !['running', 'waiting', 'paused'].includes(record.status))
    for (const id of tree) ctx.store.forgetClaim(id);
  else await Promise.all(tree.map((id) => ctx.store.release(id)));
}

/**
 * Does what the job asks. `stored`: the run as claimed (none for a start taken up the first
 * time). `takenUp` says how the job came here (a takeover, a resume after it was handed back,
 * parked or lost with its worker, or its first delivery).
 */
async function performRunJob(
  ctx: DriveContext,
  data: OneRunJobData,
  stored: VersionedRun | undefined,
  taken: TakenJob,
  takenUp: TakenUp,
): Promise<RunRecord> {
  const engine = ctx.engine;
  const redelivered = takenUp === 'takeover' || takenUp === 'resume';
  const over = stored && !['running', 'waiting', 'paused'].includes(stored.record.status);
  const drive = (run: ActiveRun) => driveToRest(ctx, run, taken, takenUp);
  let record: RunRecord;
  switch (data.kind) {
    case 'start': {
      if (over) return stored.record; // delivered again after it ended
      if (stored) {
        record = await drive(await engine.resume(data.runId));
        break;
      }
      const trigger = data.trigger ?? 'queue';
      const loaded = await loadRunDirective(engine.loader, data.source);
      const c = runConcurrencyOf(loaded.compiled.directive, data.inputs);
      if (c !== undefined && (await ctx.slots.admit(loaded.itemId, c, data.runId)) === 'wait')
        return await waitForSlot(ctx, taken, data.runId);
      const run = engine.start(loaded, data.inputs, {
        runId: data.runId,
        trigger,
        ...(data.trace && { trace: data.trace }),
        ...(data.source.tools && { tools: data.source.tools }),
        ...(data.tags && { tags: data.tags }),
        ...(data.from && { from: data.from }),
      });
      ctx.events('run:started', {
        runId: data.runId,
        directive: run.record.directive,
        trigger,
        worker: ctx.worker,
      });
      record = await drive(run);
      break;
    }
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
      record = await engine.cancelRun(data.runId, data.reason, {
        compensate: data.compensate ?? true,
      });
      break;
    case 'wake':
      if (over || stored === undefined) return stored?.record ?? notFound(data.runId);
      record = await drive(await engine.resume(data.runId));
      break;
    case 'redrive': {
      if (stored === undefined) return notFound(data.runId);
      // Delivered again after its redrive was stored: the run goes on, or is as it came to be.
      const done = (stored.record.redrives?.length ?? 0) > data.redrives;
      if (done && stored.record.status !== 'running') return stored.record;
      const run = done
        ? await engine.resume(data.runId)
        : await engine.redrive(data.runId, data.by);
      record = await drive(run);
      break;
    }
    case 'unpause':
      if (stored === undefined) return notFound(data.runId);
      if (stored.record.status !== 'paused') return stored.record;
      await ctx.pauses.state(); // as it is now: the resume that sent this job is in it
      record = await drive(await engine.resume(data.runId));
      break;
  }
  if (record.status === 'waiting') await scheduleWake(ctx, data, record);
  if (record.status === 'paused') await unpauseIfResumed(ctx, record);
  if (record.concurrency !== undefined && hasEnded(record.status))
    await ctx.slots.release(record.directive, record.concurrency, record.runId);
  // Ended here, by this job (a job delivered again after the end returned above, telling nothing).
  const { status } = record;
  if (status === 'completed' || status === 'failed' || status === 'cancelled')
    ctx.events('run:ended', {
      runId: record.runId,
      directive: record.directive,
      status,
      record,
      worker: ctx.worker,
    });
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
  if (limit !== undefined) deadlines.push(clockStart(record) + limit * 1000);
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
  throw runNotFound(runId, 'redis');
}

/**
 * A run that has just paused, when its directive was resumed meanwhile (the resume looked for
 * paused runs before this one was stored as paused): its held steps begin in a job of their own.
 */
async function unpauseIfResumed(ctx: DriveContext, record: RunRecord): Promise<void> {
  if (pausedIn(await ctx.pauses.state(), record.directive)) return;
  await ctx.runsQueue.add('unpause', { kind: 'unpause', runId: record.runId }, RUN_JOB_RETENTION);
}

/**
 * A start whose concurrency key has no free slot: its run waits, queued, holding no worker slot,
 * until the run that frees a slot promotes its job (see `concurrency-slots.ts`); the job is
 * delayed meanwhile (a run of a group of starts goes on in a job of its own, delayed).
 */
async function waitForSlot(ctx: DriveContext, taken: TakenJob, runId: string): Promise<never> {
  const { job, token, shared } = taken;
  if (shared) await goAlone(ctx.runsQueue, job, runId, SLOT_WAIT_SAFETY_MS);
  else await job.moveToDelayed(Date.now() + SLOT_WAIT_SAFETY_MS, token);
  throw new DelayedError();
}
