/**
 * The worker side of runs: takes run jobs (start, signal, cancel, wake) and drives each run with
 * an engine whose tool calls go to the tools queue and whose state goes to Redis after every
 * transition. A run is driven by one worker at a time (a per-run mutex with a lease); if that
 * worker dies, its job stalls, another worker takes it and resumes the run from the store.
 * A run that waits for a signal holds no worker slot: its job completes, and its deadlines become
 * delayed wake jobs. A run that only waits for its tool jobs or its retries is parked: its job is
 * delayed until its next deadline, and the end of one of its tool jobs promotes it.
 */
import { DelayedError, Job, Queue, WaitingError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { Mutex } from 'redis-semaphore';
import type { ActiveRun } from '../engine/active-run.js';
import { DirectiveLoader } from '../engine/directive-loader.js';
import { parkable } from '../engine/parkable.js';
import { Engine } from '../engine/engine.js';
import type { RunRecord } from '../engine/run-record.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { toJobError } from './job-error.js';
import { loadRunDirective } from './run-source.js';
import { resolve } from 'node:path';
import { QueueDispatcher } from './queue-dispatcher.js';
import { QueueName, runCancelChannel } from './queue-names.js';
import { queueOptions } from './queue-options.js';
import { ResultInbox } from './result-inbox.js';
import { markParked, PARKED_CHECK_IN_MS, wakeParked } from './parked-runs.js';
import { publishingObserver } from './run-events.js';
import { RedisRunStore } from './redis-run-store.js';
import type { RunJobData } from './run-job.js';
import type { ToolJobData } from './tool-job.js';
import { bullWorkerTiming, workerTiming, type WorkerTiming } from './worker-timing.js';
import { startDriveSpan, type TakenUp } from './job-spans.js';
import { Telemetry, type TelemetryOptions } from '../telemetry/telemetry.js';
import { SILENT_LOGGER, traceFields, type Logger } from '../telemetry/logger.js';
import { Attr } from '../telemetry/attributes.js';

/**
 * How long a run must have nothing to do before it is parked (see {@link RunWorker}): shorter
 * waits cost less to sit out than to store, let go and resume.
 */
export const PARK_AFTER_MS = 2000;

/** What a run worker needs. */
export interface RunWorkerOptions {
  redis: Redis;
  prefix: string;
  /**
   * The project this worker serves: directives and tools resolve in it, whatever machine started
   * the run (default: the current folder).
   */
  projectDir?: string;
  /** Runs driven at once by this process (default 50: they mostly wait on tool jobs). */
  concurrency?: number;
  /** How long finished runs are kept in Redis, seconds. */
  retentionSeconds?: number;
  timing?: WorkerTiming;
  /** Where the runs' spans and metrics go (see `telemetry/telemetry.ts`); default none. */
  telemetry?: Telemetry | TelemetryOptions;
  /** Where the worker logs what happens to runs (default: nowhere). */
  logger?: Logger;
}

/** A running run worker; `close()` lets the runs under way settle, then stops. */
export class RunWorker {
  readonly worker: Worker<RunJobData, RunRecord>;
  readonly store: RedisRunStore;
  private readonly runsQueue: Queue<RunJobData>;
  private readonly toolsQueue: Queue<ToolJobData>;
  private readonly inbox: ResultInbox;
  /** The tool calls of every project's engine go through it. */
  private readonly dispatcher: QueueDispatcher;
  private readonly subscriber: Redis;
  /** The engine of the project served, made on first use. */
  private engineOfProject: Engine | undefined;
  private readonly timing: WorkerTiming;
  /** Runs this worker drives, and how to hand each back or park it. */
  private readonly driving = new Map<string, Driven>();
  private readonly parkScan: NodeJS.Timeout;
  private closing = false;
  /** Runs whose progress someone watches (their current job asked for it). */
  private readonly watched = new Set<string>();
  /** BullMQ does not close a connection it is given: this worker closes its own. */
  private readonly owned: Redis[] = [];
  private readonly telemetry: Telemetry | undefined;
  private readonly log: Logger;

  constructor(private readonly options: RunWorkerOptions) {
    const { redis, prefix } = options;
    this.timing = options.timing ?? workerTiming();
    this.telemetry = Telemetry.of(options.telemetry);
    this.log = options.logger ?? SILENT_LOGGER;
    this.store = new RedisRunStore(redis, {
      prefix,
      ...(options.retentionSeconds !== undefined && { retentionSeconds: options.retentionSeconds }),
    });
    this.runsQueue = new Queue<RunJobData>(QueueName.RUNS, queueOptions(redis, prefix));
    this.toolsQueue = new Queue<ToolJobData>(QueueName.TOOLS, queueOptions(redis, prefix));
    this.inbox = new ResultInbox(redis, prefix, this.toolsQueue);
    this.dispatcher = new QueueDispatcher(this.toolsQueue, this.inbox, redis, prefix);
    this.subscriber = this.own(redis);
    void this.subscriber.subscribe(runCancelChannel(prefix));
    this.subscriber.on('message', (_c: string, message: string) => {
      const { runId, reason } = JSON.parse(message) as { runId: string; reason?: string };
      this.engineOfProject?.cancel(runId, reason);
    });
    // An outcome no call waits for may be one a parked run waits for.
    this.inbox.onUnexpected = ({ runId }) => {
      if (runId !== undefined)
        void wakeParked(redis, prefix, this.runsQueue, runId).catch(() => undefined);
    };
    this.parkScan = setInterval(() => {
      for (const d of this.driving.values()) this.parkIfIdle(d);
    }, PARK_AFTER_MS / 2);
    this.parkScan.unref();
    this.worker = new Worker<RunJobData, RunRecord>(
      QueueName.RUNS,
      (job, token) => this.process(job, token),
      {
        connection: this.own(redis),
        prefix,
        concurrency: options.concurrency ?? 50,
        ...bullWorkerTiming(this.timing),
      },
    );
  }

  /**
   * Stops taking jobs, hands the runs it drives back to the queue (another worker resumes them),
   * waits for signal and cancel jobs under way, then closes its connections.
   */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.parkScan);
    for (const d of this.driving.values()) d.handOver();
    await this.worker.close();
    await this.engineOfProject?.drain();
    this.engineOfProject?.release();
    this.inbox.close();
    await Promise.all([this.runsQueue.close(), this.toolsQueue.close()]);
    for (const c of this.owned) c.disconnect();
  }

  private own(redis: Redis): Redis {
    const c = redis.duplicate();
    this.owned.push(c);
    return c;
  }

  private async process(
    job: Job<RunJobData, RunRecord>,
    token: string | undefined,
  ): Promise<RunRecord> {
    const data = job.data;
    const watch = 'watch' in data && data.watch === true;
    if (watch) this.watched.add(data.runId);
    try {
      if (data.kind === 'cancel') {
        // The worker driving the run (if one does) cancels it at once; a waiting run is
        // cancelled here, under its lock.
        await this.options.redis.publish(
          runCancelChannel(this.options.prefix),
          JSON.stringify({ runId: data.runId, reason: data.reason }),
        );
      }
      const redelivered = job.attemptsStarted > 1 || job.stalledCounter > 0;
      return await this.withRunLock(data.runId, () => this.drive(data, redelivered, job, token));
    } catch (err) {
      if (err instanceof WaitingError || err instanceof DelayedError) throw err;
      throw toJobError(err);
    } finally {
      if (watch) this.watched.delete(data.runId);
    }
  }

  /**
   * Does what the job asks, under the run's lock. `redelivered`: the job was taken up before (and
   * handed back, parked, or lost with its worker), so the run may have moved on meanwhile.
   */
  private async drive(
    data: RunJobData,
    redelivered: boolean,
    job: Job<RunJobData, RunRecord>,
    token: string | undefined,
  ): Promise<RunRecord> {
    const engine = this.engine();
    // A start taken up for the first time has nothing stored yet: no need to look.
    const fresh = data.kind === 'start' && !redelivered;
    const stored = fresh ? undefined : await this.store.load(data.runId);
    const over = stored && !['running', 'waiting'].includes(stored.record.status);
    const takenUp: TakenUp =
      job.stalledCounter > 0 ? 'takeover' : redelivered ? 'resume' : data.kind;
    const drive = (run: ActiveRun) =>
      this.untilSettledOrHandedOver(run, engine, job, token, takenUp);
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
    if (record.status === 'waiting') await this.scheduleWake(engine, data, record);
    engine.releaseRun(data.runId);
    return record;
  }

  /**
   * The run's record once it ends or waits. If this worker is told to close first, the run is
   * handed back: stored as it stands, let go, and its job returned to the queue, where another
   * worker takes it up and resumes the run (its tool calls under way are answered, not repeated).
   * A run with nothing to do but wait for its tool jobs or its retries is parked the same way
   * (see {@link parkIfIdle}): its job is delayed until the run's next deadline, and the end of
   * one of its tool jobs wakes it (see parked-runs.ts).
   */
  private async untilSettledOrHandedOver(
    run: ActiveRun,
    engine: Engine,
    job: Job<RunJobData, RunRecord>,
    token: string | undefined,
    takenUp: TakenUp,
  ): Promise<RunRecord> {
    const span =
      this.telemetry &&
      startDriveSpan(
        this.telemetry,
        QueueName.RUNS,
        job,
        { runId: run.runId, directive: run.record.directive, trace: run.trace },
        takenUp,
      );
    const fields = traceFields(run.runId, span?.span ?? run.trace);
    if (takenUp === 'takeover')
      this.log.info(
        { ...fields, directive: run.record.directive, stalled: job.stalledCounter },
        `took over run ${run.runId}: the worker that drove it stopped`,
      );
    let driven!: Driven;
    const handover = new Promise<{ handover: true }>((resolve) => {
      driven = { run, handOver: () => resolve({ handover: true }), park: () => {} };
    });
    const parked = new Promise<{ due: number; jobIds: string[] }>((resolve) => {
      driven.park = (due) => {
        if (!this.driving.has(run.runId)) return; // parked already, or settled
        this.driving.delete(run.runId);
        // Let go first, so that nothing reaches the run any more; then stop waiting for its calls.
        engine.releaseRun(run.runId);
        resolve({ due, jobIds: this.dispatcher.abandon(run.runId, letGo(run.runId)) });
      };
    });
    this.driving.set(run.runId, driven);
    run.onParkable = () => this.parkIfIdle(driven);
    if (this.closing) driven.handOver();
    let outcome: RunRecord | { handover: true } | { due: number; jobIds: string[] };
    try {
      outcome = await Promise.race([run.settled(), handover, parked]);
    } catch (err) {
      span?.end(DirigentError.from(err));
      throw err;
    } finally {
      this.driving.delete(run.runId);
      run.onParkable = undefined;
    }
    if (!('handover' in outcome) && !('due' in outcome)) {
      span?.span.setAttribute(Attr.RUN_STATUS, outcome.status);
      span?.end();
      this.logSettled(outcome, fields);
      return outcome;
    }
    span?.span.addEvent('handover' in outcome ? 'handed over' : 'parked', {
      ...('due' in outcome && { 'dirigent.run.parked_until': outcome.due }),
    });
    span?.end();
    if ('handover' in outcome)
      this.log.info(fields, `handed run ${run.runId} back to the queue: this worker is closing`);
    else this.log.debug({ ...fields, until: outcome.due }, `parked run ${run.runId}`);
    await run.persisted();
    if ('handover' in outcome) {
      engine.releaseRun(run.runId);
      await job.moveToWait(token);
      throw new WaitingError();
    }
    const { redis, prefix } = this.options;
    await job.moveToDelayed(outcome.due, token);
    await markParked(redis, prefix, run.runId, job.id!, outcome.due);
    // A call that ended before the mark found nothing to wake: look for one.
    const ended = await Promise.all(
      outcome.jobIds.map(async (id) => (await Job.fromId(this.toolsQueue, id))?.finishedOn),
    );
    if (ended.some((at) => at !== undefined))
      await wakeParked(redis, prefix, this.runsQueue, run.runId);
    throw new DelayedError();
  }

  /** Logs how a run this worker drove came to rest: failures as warnings, the rest for debugging. */
  private logSettled(record: RunRecord, fields: Record<string, string>): void {
    const at = { ...fields, directive: record.directive, status: record.status };
    if (record.status === 'failed' && record.error)
      this.log.warn(
        { ...at, error_code: record.error.code, step: record.error.step },
        `run ${record.runId} failed: ${record.error.message}`,
      );
    else this.log.debug(at, `run ${record.runId} ${record.status}`);
  }

  /**
   * Parks the run if it has nothing to do for a while: every step waits for tool jobs (the last
   * enqueued at least {@link PARK_AFTER_MS} ago) or for a retry, and its next deadline is at least
   * that far away. Tool calls that end sooner, and short waits, cost less to sit out than to
   * store, let go and resume.
   */
  private parkIfIdle(d: Driven): void {
    const idle = parkable(d.run);
    if (idle === undefined) return;
    const now = Date.now();
    const open = this.dispatcher.openCalls(d.run.runId);
    if (open !== undefined) {
      if (now - open.lastAt < PARK_AFTER_MS) return;
    } else if (idle.calls) return; // between two calls of a step, in this process
    const due = Math.min(idle.due ?? Infinity, now + PARKED_CHECK_IN_MS);
    if (due - now >= PARK_AFTER_MS) d.park(due);
  }

  /** A waiting run's next deadline becomes a delayed wake job (one per deadline: idempotent). */
  private async scheduleWake(engine: Engine, data: RunJobData, record: RunRecord): Promise<void> {
    const deadlines = (record.waiting ?? []).flatMap((w) => (w.deadline ? [w.deadline] : []));
    const limit = engine.activeRun(data.runId)?.directive.limits.durationSeconds;
    if (limit !== undefined) deadlines.push(record.startedAt + limit * 1000);
    if (deadlines.length === 0) return;
    const at = Math.min(...deadlines);
    await this.runsQueue.add(
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

  private async withRunLock<T>(runId: string, work: () => Promise<T>): Promise<T> {
    const mutex = new Mutex(this.options.redis, `${this.options.prefix}:run-lock:${runId}`, {
      lockTimeout: this.timing.lockMs,
      acquireTimeout: 10 * 60_000,
      retryInterval: 50,
    });
    await mutex.acquire();
    try {
      return await work();
    } finally {
      await mutex.release();
    }
  }

  private engine(): Engine {
    let engine = this.engineOfProject;
    if (engine === undefined) {
      const projectDir = resolve(this.options.projectDir ?? process.cwd());
      engine = new Engine({
        projectDir,
        dispatcher: this.dispatcher,
        loader: new DirectiveLoader(projectDir),
        store: this.store,
        durable: true,
        observer: publishingObserver(this.options.redis, this.options.prefix, this.watched),
        ...(this.telemetry && { telemetry: this.telemetry }),
      });
      this.engineOfProject = engine;
    }
    return engine;
  }
}

/** A run this worker drives: how to hand it back, or park it until `due`. */
interface Driven {
  run: ActiveRun;
  handOver: () => void;
  park: (due: number) => void;
}

function letGo(runId: string): DirigentError {
  return DirigentError.fatal(ErrorCode.CANCELLED, `Run ${runId} was parked by this worker.`);
}

function notFound(runId: string): never {
  throw DirigentError.fatal(ErrorCode.RUN_NOT_FOUND, `No run with id ${runId}.`);
}
