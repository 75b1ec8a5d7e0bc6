/**
 * Driving one run on a worker until it comes to rest: it ends or waits for a signal (settled), it
 * has nothing to do but wait for its tool jobs or retries (parked: its job is delayed until its
 * next deadline, and the end of one of its tool jobs wakes it, see parked-runs.ts), the worker
 * closes (handed back: its job returns to the queue and another worker resumes the run), or the
 * worker loses it (its lease lapsed, or another worker took the run over: it stops and writes
 * nothing more). A run that is not settled is let go in the store (`RedisRunStore.release`), so
 * whoever takes it up next claims it at once.
 */
import { backToWait } from '../back-to-wait.js';
import { DelayedError, Job, type Queue, WaitingError } from 'bullmq';
import type { RedisClient } from '../redis-client.js';
import type { ActiveRun } from '../../engine/active-run.js';
import type { Engine } from '../../engine/engine.js';
import { parkable } from '../../engine/parkable.js';
import type { RunRecord } from '../../engine/run-record.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { Attr } from '../../telemetry/attributes.js';
import { traceFields, type Logger } from '../../telemetry/logger.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import { startDriveSpan, type TakenUp } from '../job-spans.js';
import { markParked, PARKED_CHECK_IN_MS, parkedKey, promoteParked } from '../parked-runs.js';
import type { QueueDispatcher } from './queue-dispatcher.js';
import { QueueName } from '../queue-names.js';
import type { ConcurrencySlots } from '../concurrency-slots.js';
import type { RedisPauseBook } from '../client/redis-pause-book.js';
import type { RedisRunStore } from '../run-store/redis-run-store.js';
import type { RunJob, RunJobData } from '../run-job.js';
import { goAlone } from './go-alone.js';
import type { ToolJobData } from '../tool-job.js';
import type { RunEventSink } from './run-worker-options.js';
import { runLetGo } from '../../errors/stop-errors.js';

/**
 * How long a run must have nothing to do before it is parked: shorter waits cost less to sit out
 * than to store, let go and resume.
 */
export const PARK_AFTER_MS = 2000;

/** What driving a run needs of its worker. */
export interface DriveContext {
  redis: RedisClient;
  prefix: string;
  engine: Engine;
  store: RedisRunStore;
  dispatcher: QueueDispatcher;
  runsQueue: Queue<RunJobData>;
  toolsQueue: Queue<ToolJobData>;
  telemetry: Telemetry | undefined;
  log: Logger;
  /** The runs the worker drives now, by id. */
  driving: Map<string, DrivenRun>;
  /** Whether the worker is closing (a run taken up now is handed back at once). */
  closing: () => boolean;
  /** The worker's lease name: the `worker` of its events. */
  worker: string;
  /** Tells what happens to the runs (`RunWorkerOptions.events`); never throws. */
  events: RunEventSink;
  /** The pauses in force (see `operations/pause.ts`), kept up to date. */
  pauses: RedisPauseBook;
  /** The slots of run concurrency keys (see `concurrency-slots.ts`). */
  slots: ConcurrencySlots;
}

type Rest =
  | { kind: 'settled'; record: RunRecord }
  | { kind: 'handover' }
  | { kind: 'parked'; due: number; jobIds: string[] }
  | { kind: 'lost'; error: DirigentError; tree: string[] };

/** A run a worker drives: how to hand it back, park it, or stop driving it. */
export class DrivenRun {
  private rested!: (rest: Rest) => void;
  /** Resolves when the run is handed back, parked or lost (settling is the run's own). */
  readonly interrupted = new Promise<Rest>((resolve) => (this.rested = resolve));
  private done = false;

  constructor(
    readonly run: ActiveRun,
    private readonly ctx: DriveContext,
  ) {}

  /**
   * Hands the run back to the queue (the worker closes), once the calls it runs in this process
   * have ended and their outcomes reached it: no one else could take them.
   */
  handOver(): void {
    void this.ctx.dispatcher
      .inProcessEnded(this.run.runId)
      .then(() => new Promise((resolve) => setImmediate(resolve)))
      .then(() => this.rest({ kind: 'handover' }));
  }

  /**
   * Stops driving the run: another worker has it, or will. What it still writes (the transitions
   * it gathered) is refused once that worker has claimed the run.
   */
  lose(error: DirigentError): void {
    if (this.done) return;
    const tree = runTree(this.ctx.engine, this.run.runId);
    this.ctx.engine.releaseRun(this.run.runId);
    for (const runId of tree) {
      // Its calls running here are made again by the worker that resumes it; its tool jobs go on,
      // for that worker to wait for (this drive no longer does, nor cancels them).
      this.ctx.dispatcher.stopInProcess(runId);
      this.ctx.dispatcher.abandon(runId, runLetGo(runId, 'this worker lost it'));
    }
    this.rest({ kind: 'lost', error, tree });
  }

  /**
   * Parks the run if it has nothing to do for a while: every step waits for tool jobs (the last
   * enqueued at least {@link PARK_AFTER_MS} ago) or for a retry, and its next deadline is at least
   * that far away.
   */
  parkIfIdle(): void {
    const idle = parkable(this.run);
    if (idle === undefined || this.done) return;
    const now = Date.now();
    const open = this.ctx.dispatcher.openCalls(this.run.runId);
    if (open !== undefined) {
      // A call running in this process holds its run here: nothing else would wake it.
      if (open.inProcess > 0 || now - open.lastAt < PARK_AFTER_MS) return;
    } else if (idle.calls) return; // between two calls of a step, in this process
    const due = Math.min(idle.due ?? Infinity, now + PARKED_CHECK_IN_MS);
    if (due - now < PARK_AFTER_MS) return;
    const runId = this.run.runId;
    // Let go first, so that nothing reaches the run any more; then stop waiting for its calls.
    this.ctx.engine.releaseRun(runId);
    const jobIds = this.ctx.dispatcher.abandon(runId, runLetGo(runId, 'this worker parked it'));
    this.rest({ kind: 'parked', due, jobIds });
  }

  private rest(rest: Rest): void {
    if (this.done) return;
    this.done = true;
    this.ctx.driving.delete(this.run.runId);
    this.rested(rest);
  }
}

/** The job a run is driven in: its own, or (`shared`) a group of starts it belongs to. */
export interface TakenJob {
  job: RunJob;
  token: string | undefined;
  shared: boolean;
}

/**
 * Drives `run` (taken up in `taken`) until it comes to rest; resolves with its record once it
 * ends or waits, and otherwise throws BullMQ's `WaitingError` (handed back, or lost) or
 * `DelayedError` (parked) after moving the job. A run of a group moves no job but goes on in a job
 * of its own (`go-alone.ts`) and throws `DelayedError`; lost, it throws `WaitingError` and leaves
 * its group's job to whoever took it.
 */
export async function driveToRest(
  ctx: DriveContext,
  run: ActiveRun,
  taken: TakenJob,
  takenUp: TakenUp,
): Promise<RunRecord> {
  const { job, token, shared } = taken;
  const t = ctx.telemetry;
  const info = { runId: run.runId, directive: run.record.directive, trace: run.trace };
  const span = t && startDriveSpan(t, QueueName.RUNS, job, info, takenUp);
  const fields = traceFields(run.runId, span?.span ?? run.trace);
  const driven = new DrivenRun(run, ctx);
  ctx.driving.set(run.runId, driven);
  run.onParkable = () => driven.parkIfIdle();
  if (ctx.closing()) driven.handOver();
  let rest: Rest;
  try {
    rest = await Promise.race([
      run.settled().then((record): Rest => ({ kind: 'settled', record })),
      driven.interrupted,
    ]);
  } catch (err) {
    span?.end(DirigentError.from(err));
    throw err;
  } finally {
    ctx.driving.delete(run.runId);
    run.onParkable = undefined;
  }
  if (rest.kind === 'settled') {
    span?.span.setAttribute(Attr.RUN_STATUS, rest.record.status);
    span?.end();
    logSettled(ctx.log, rest.record, fields);
    return rest.record;
  }
  if (rest.kind === 'lost') {
    span?.span.addEvent('lost', { 'dirigent.error.code': rest.error.code });
    span?.end(rest.error);
    ctx.log.warn({ ...fields, error_code: rest.error.code }, rest.error.message);
    ctx.events('run:lost', {
      runId: run.runId,
      directive: info.directive,
      worker: ctx.worker,
      error: { code: rest.error.code, message: rest.error.message },
    });
    // The runs are let go where this worker still owns them (its lease lapsed but nobody took
    // them yet): its lease is live again after the renewal that told it, and a claim by another
    // worker would be refused while it names this one. Where another worker claimed them, the
    // release changes nothing; the next claim's new epoch fences what this worker still sends.
    await Promise.all(
      rest.tree.map((id) => ctx.store.release(id).catch(() => ctx.store.forgetClaim(id))),
    );
    // The job is no longer this worker's when another took the run over; if it still is (Redis
    // did not answer for a lease), it goes back to the queue.
    if (!shared)
      await backToWait(job, token, ctx.runsQueue, ctx.redis).catch(() => {
        // Not this worker's job any more (another took the run over): nothing to put back.
      });
    throw new WaitingError();
  }
  span?.span.addEvent(rest.kind === 'handover' ? 'handed over' : 'parked', {
    ...(rest.kind === 'parked' && { 'dirigent.run.parked_until': rest.due }),
  });
  span?.end();
  await run.persisted();
  if (rest.kind === 'handover') {
    ctx.log.info(fields, `handed run ${run.runId} back to the queue: this worker is closing`);
    const tree = runTree(ctx.engine, run.runId);
    ctx.engine.releaseRun(run.runId);
    await Promise.all(tree.map((id) => ctx.store.release(id)));
    ctx.events('run:handed-back', {
      runId: run.runId,
      directive: info.directive,
      worker: ctx.worker,
    });
    if (shared) {
      await goAlone(ctx.runsQueue, job, run.runId);
      throw new DelayedError();
    }
    await backToWait(job, token, ctx.runsQueue, ctx.redis);
    throw new WaitingError();
  }
  ctx.log.debug({ ...fields, until: rest.due }, `parked run ${run.runId}`);
  await ctx.store.release(run.runId);
  const { redis, prefix } = ctx;
  // The mark first: a worker that dies after it leaves a job still active, which its takeover
  // puts back in the queue; the other way round, a call ending in between would find nothing to
  // wake, and the run would sleep until its check-in.
  // A run of a group parks in a job of its own, whose id is the run's.
  await markParked(redis, prefix, run.runId, shared ? run.runId : job.id!, rest.due);
  const parked = shared
    ? await goAlone(ctx.runsQueue, job, run.runId, Math.max(1, rest.due - Date.now()))
    : job;
  if (!shared) await job.moveToDelayed(rest.due, token);
  // A call that ended before the job was delayed could not wake it: look for one, and for a wake
  // that came in between, which took the mark but found no delayed job to promote.
  const [marked, ...ended] = await Promise.all([
    redis.exists(parkedKey(prefix, run.runId)),
    ...rest.jobIds.map(async (id) => (await Job.fromId(ctx.toolsQueue, id))?.finishedOn),
  ]);
  if (marked === 0 || ended.some((at) => at !== undefined))
    await promoteParked(redis, prefix, parked, run.runId);
  throw new DelayedError();
}

/** A run and its child runs in this engine, children after parents. */
export function runTree(engine: Engine, runId: string): string[] {
  const ids = [runId];
  for (let i = 0; i < ids.length; i++)
    for (const child of Object.values(engine.activeRun(ids[i]!)?.children ?? {})) ids.push(child);
  return ids;
}

/** Logs how a run came to rest: failures as warnings, the rest for debugging. */
function logSettled(log: Logger, record: RunRecord, fields: Record<string, string>): void {
  const at = { ...fields, directive: record.directive, status: record.status };
  if (record.status === 'failed' && record.error)
    log.warn(
      { ...at, error_code: record.error.code, step: record.error.step },
      `run ${record.runId} failed: ${record.error.message}`,
    );
  else log.debug(at, `run ${record.runId} ${record.status}`);
}
