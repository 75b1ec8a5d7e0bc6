/**
 * The worker side of runs: takes run jobs (start, signal, cancel, wake) and drives each run with
 * an engine whose tool calls go to the tools queue and whose state goes to Redis after every
 * transition. A run is driven by one worker at a time (a per-run mutex with a lease); if that
 * worker dies, its job stalls, another worker takes it and resumes the run from the store.
 * A run that waits holds no worker slot: its job completes, and its deadlines become delayed
 * wake jobs.
 */
import { DelayedError, Queue, WaitingError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { Mutex } from 'redis-semaphore';
import type { ActiveRun } from '../engine/active-run.js';
import { DirectiveLoader } from '../engine/directive-loader.js';
import { Engine } from '../engine/engine.js';
import type { RunRecord } from '../engine/run-record.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { toJobError } from './job-error.js';
import { QueueDispatcher } from './queue-dispatcher.js';
import { QueueName, runCancelChannel } from './queue-names.js';
import { queueOptions } from './queue-options.js';
import { ResultInbox } from './result-inbox.js';
import { publishingObserver } from './run-events.js';
import { RedisRunStore } from './redis-run-store.js';
import type { RunJobData } from './run-job.js';
import type { ToolJobData } from './tool-job.js';
import { bullWorkerTiming, workerTiming, type WorkerTiming } from './worker-timing.js';

/**
 * The shortest retry delay for which a run whose steps all wait to retry is let go (its job
 * delayed) rather than kept in memory: shorter waits cost less to sleep through than to store,
 * let go and resume.
 */
export const PARK_AFTER_MS = 2000;

/** What a run worker needs. */
export interface RunWorkerOptions {
  redis: Redis;
  prefix: string;
  /** Runs driven at once by this process (default 50: they mostly wait on tool jobs). */
  concurrency?: number;
  /** How long finished runs are kept in Redis, seconds. */
  retentionSeconds?: number;
  timing?: WorkerTiming;
}

/** A running run worker; `close()` lets the runs under way settle, then stops. */
export class RunWorker {
  readonly worker: Worker<RunJobData, RunRecord>;
  readonly store: RedisRunStore;
  private readonly runsQueue: Queue<RunJobData>;
  private readonly toolsQueue: Queue<ToolJobData>;
  private readonly inbox: ResultInbox;
  private readonly subscriber: Redis;
  private readonly engines = new Map<string, Engine>();
  private readonly timing: WorkerTiming;
  /** Runs this worker drives, each with the function that hands it back. */
  private readonly driving = new Map<string, () => void>();
  private closing = false;
  /** Runs whose progress someone watches (their current job asked for it). */
  private readonly watched = new Set<string>();
  /** BullMQ does not close a connection it is given: this worker closes its own. */
  private readonly owned: Redis[] = [];

  constructor(private readonly options: RunWorkerOptions) {
    const { redis, prefix } = options;
    this.timing = options.timing ?? workerTiming();
    this.store = new RedisRunStore(redis, {
      prefix,
      ...(options.retentionSeconds !== undefined && { retentionSeconds: options.retentionSeconds }),
    });
    this.runsQueue = new Queue<RunJobData>(QueueName.RUNS, queueOptions(redis, prefix));
    this.toolsQueue = new Queue<ToolJobData>(QueueName.TOOLS, queueOptions(redis, prefix));
    this.inbox = new ResultInbox(redis, prefix, this.toolsQueue);
    this.subscriber = this.own(redis);
    void this.subscriber.subscribe(runCancelChannel(prefix));
    this.subscriber.on('message', (_c: string, message: string) => {
      const { runId, reason } = JSON.parse(message) as { runId: string; reason?: string };
      for (const engine of this.engines.values()) engine.cancel(runId, reason);
    });
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
    for (const handOver of this.driving.values()) handOver();
    await this.worker.close();
    await Promise.all([...this.engines.values()].map((e) => e.drain()));
    for (const e of this.engines.values()) e.release();
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
      // A start taken up for the first time has nothing stored yet: no need to look.
      const fresh = data.kind === 'start' && job.attemptsStarted <= 1 && job.stalledCounter === 0;
      return await this.withRunLock(data.runId, () => this.drive(data, fresh, job, token));
    } catch (err) {
      if (err instanceof WaitingError || err instanceof DelayedError) throw err;
      throw toJobError(err);
    } finally {
      if (watch) this.watched.delete(data.runId);
    }
  }

  private async drive(
    data: RunJobData,
    fresh: boolean,
    job: Job<RunJobData, RunRecord>,
    token: string | undefined,
  ): Promise<RunRecord> {
    const engine = this.engineFor(data.projectDir);
    const stored = fresh ? undefined : await this.store.load(data.runId);
    const over = stored && !['running', 'waiting'].includes(stored.record.status);
    let record: RunRecord;
    switch (data.kind) {
      case 'start':
        if (over) return stored.record; // delivered again after it ended
        record = await this.untilSettledOrHandedOver(
          stored
            ? await engine.resume(data.runId)
            : engine.start(
                engine.loader.fromText(data.source.file, data.source.text),
                data.inputs,
                {
                  runId: data.runId,
                },
              ),
          engine,
          job,
          token,
        );
        break;
      case 'signal':
        record = await engine.signal(data.runId, data.name, data.payload);
        break;
      case 'cancel':
        if (over) return stored.record;
        record = await engine.cancelRun(data.runId, data.reason);
        break;
      case 'wake':
        if (over || stored === undefined) return stored?.record ?? notFound(data.runId);
        record = await this.untilSettledOrHandedOver(
          await engine.resume(data.runId),
          engine,
          job,
          token,
        );
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
   * A run whose steps all wait to retry, the first at least {@link PARK_AFTER_MS} away, is let go
   * the same way, its job delayed until then: a long backoff holds no worker slot, and the delay
   * is a delayed job, so it survives every process.
   */
  private async untilSettledOrHandedOver(
    run: ActiveRun,
    engine: Engine,
    job: Job<RunJobData, RunRecord>,
    token: string | undefined,
  ): Promise<RunRecord> {
    const handover = new Promise<{ handover: true }>((resolve) =>
      this.driving.set(run.runId, () => resolve({ handover: true })),
    );
    if (this.closing) this.driving.get(run.runId)!();
    const parked = new Promise<{ until: number }>((resolve) => {
      run.onBackingOff = (until) => {
        if (until - Date.now() >= PARK_AFTER_MS) resolve({ until });
      };
    });
    let outcome: RunRecord | { handover: true } | { until: number };
    try {
      outcome = await Promise.race([run.settled(), handover, parked]);
    } finally {
      this.driving.delete(run.runId);
      run.onBackingOff = undefined;
    }
    if (!('handover' in outcome) && !('until' in outcome)) return outcome;
    await run.persisted();
    engine.releaseRun(run.runId);
    if ('handover' in outcome) {
      await job.moveToWait(token);
      throw new WaitingError();
    }
    // The run's own time limit may come first.
    const limit = run.directive.limits.durationSeconds;
    const due = Math.min(
      outcome.until,
      limit === undefined ? Infinity : run.record.startedAt + limit * 1000,
    );
    await job.moveToDelayed(due, token);
    throw new DelayedError();
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
      { kind: 'wake', runId: data.runId, projectDir: data.projectDir },
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

  private engineFor(projectDir: string): Engine {
    let engine = this.engines.get(projectDir);
    if (engine === undefined) {
      engine = new Engine({
        projectDir,
        dispatcher: new QueueDispatcher(
          this.toolsQueue,
          this.inbox,
          this.options.redis,
          this.options.prefix,
        ),
        loader: new DirectiveLoader(projectDir),
        store: this.store,
        durable: true,
        observer: publishingObserver(this.options.redis, this.options.prefix, this.watched),
      });
      this.engines.set(projectDir, engine);
    }
    return engine;
  }
}

function notFound(runId: string): never {
  throw DirigentError.fatal(ErrorCode.RUN_NOT_FOUND, `No run with id ${runId}.`);
}
