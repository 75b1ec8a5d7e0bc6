/**
 * The worker side of runs: takes run jobs (start, signal, cancel, wake) and drives each run with
 * an engine whose tool calls go to the tools queue and whose state goes to Redis after every
 * transition. A run is driven by one worker at a time: the worker claims it in the store before
 * driving it (`run-claims.ts`), and its writes are fenced by that claim. Every worker keeps a
 * lease (`worker-lease.ts`); when one dies, another finds its lease lapsed within seconds, puts its
 * run jobs back in the queue and fails its tool calls as lost, and the runs go on from the store.
 * A run that waits for a signal holds no worker slot: its job completes, and its deadlines become
 * delayed wake jobs. A run that only waits for its tool jobs or its retries is parked
 * (`drive-to-rest.ts`): its job is delayed until its next deadline, and the end of one of its tool
 * jobs promotes it.
 */
import { quiet, duplicateOf } from '../redis-connection.js';
import { DelayedError, Queue, Worker } from 'bullmq';
import type { RedisClient } from '../redis-client.js';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Engine } from '../../engine/engine.js';
import type { RunRecord } from '../../engine/run-record.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { SILENT_LOGGER, type Logger } from '../../telemetry/logger.js';
import { Telemetry } from '../../telemetry/telemetry.js';
import { DrivenRun, PARK_AFTER_MS, type DriveContext } from './drive-to-rest.js';
import { toJobError } from '../job-error.js';
import { wakeParked } from '../parked-runs.js';
import { RedisPauseBook } from '../client/redis-pause-book.js';
import { ConcurrencySlots } from '../concurrency-slots.js';
import { ShardLayout } from '../shards/shard-layout.js';
import { QueueDispatcher } from './queue-dispatcher.js';
import { QueueName, runCancelChannel } from '../queue-names.js';
import { queueOptions } from '../queue-options.js';
import { runTakenOver } from '../takeover/run-claims.js';
import { takeOverDeadWorkers } from '../takeover/reap-dead-worker.js';
import { comeBackLater } from './come-back-later.js';
import { takeUpRun } from './perform-run-job.js';
import { RedisRunStore } from '../run-store/redis-run-store.js';
import { ResultInbox } from '../result-inbox.js';
import type { OneRunJobData, RunJob, RunJobData, RunJobResult } from '../run-job.js';
import { performStartGroup } from './start-group.js';
import type { ToolJobData } from '../tool-job.js';
import { workerEngine } from './worker-engine.js';
import { leaseName, WorkerLease } from '../takeover/worker-lease.js';
import { bullWorkerTiming, workerTiming } from '../worker-timing.js';
import type { RunEventSink, RunWorkerOptions } from './run-worker-options.js';

export { PARK_AFTER_MS } from './drive-to-rest.js';
export type * from './run-worker-options.js';

/** A running run worker; `close()` lets the runs under way settle, then stops. */
export class RunWorker {
  readonly worker: Worker<RunJobData, RunJobResult>;
  readonly store: RedisRunStore;
  /**
   * This worker's name in the deployment (its lease name, `dirigent-runs/<BullMQ worker id>`): the
   * owner of the runs it claims, and the `worker` of its events.
   */
  readonly name: string;
  private readonly runsQueue: Queue<RunJobData>;
  private readonly toolsQueue: Queue<ToolJobData>;
  private readonly inbox: ResultInbox;
  /** The pauses in force, which the engine asks at every step. */
  private readonly pauses: RedisPauseBook;
  /** The slots of run concurrency keys. */
  private readonly slots: ConcurrencySlots;
  /** Resolves once the pauses in force were first read. */
  private readonly pausesRead: Promise<void>;
  /** The tool calls of every project's engine go through it. */
  private readonly dispatcher: QueueDispatcher;
  private readonly subscriber: RedisClient;
  private readonly lease: WorkerLease;
  /** The engine of the project served, made on first use. */
  private engineOfProject: Engine | undefined;
  private driveContext: DriveContext | undefined;
  /** Runs this worker drives, and how to hand each back, park it or stop driving it. */
  private readonly driving = new Map<string, DrivenRun>();
  /**
   * One per run this worker drives for a job, from its start or take-up until it comes to rest:
   * a group of starts (one job) drives no more runs at once than jobs of their own would.
   */
  private readonly runSlots: LimitFunction;
  private readonly concurrency: number;
  /** Jobs this worker has taken up and not finished. */
  private jobsActive = 0;
  /** Runs a job of this worker is about (at most one job per run at a time). */
  private readonly held = new Set<string>();
  private readonly parkScan: NodeJS.Timeout;
  private closing = false;
  /** BullMQ does not close a connection it is given: this worker closes its own. */
  private readonly owned: RedisClient[] = [];
  private readonly telemetry: Telemetry | undefined;
  private readonly log: Logger;
  /** Tells {@link RunWorkerOptions.events}; a listener that throws does not reach the run. */
  private readonly tell: RunEventSink = (name, event) => {
    try {
      this.options.events?.(name, event);
    } catch (err) {
      this.log.error(
        { event: name, run_id: event.runId, err: String(err) },
        `a listener of ${name} threw: ${String(err)}`,
      );
    }
  };

  constructor(private readonly options: RunWorkerOptions) {
    const { redis, prefix } = options;
    const concurrency = (this.concurrency = options.concurrency ?? 50);
    this.runSlots = pLimit(concurrency);
    const timing = options.timing ?? workerTiming();
    this.telemetry = Telemetry.of(options.telemetry);
    this.log = options.logger ?? SILENT_LOGGER;
    // Made first, started last: its id names this worker's lease and its claims of runs.
    this.worker = new Worker<RunJobData, RunJobResult>(
      QueueName.RUNS,
      (job, token) => this.process(job, token),
      {
        connection: this.own(redis),
        prefix,
        concurrency,
        autorun: false,
        ...bullWorkerTiming(timing),
      },
    );
    const name = (this.name = leaseName(QueueName.RUNS, this.worker.id));
    this.store = new RedisRunStore(redis, {
      prefix,
      owner: name,
      ...(options.retentionSeconds !== undefined && { retentionSeconds: options.retentionSeconds }),
      ...(options.replicaWait && {
        replicaWait: {
          ...options.replicaWait,
          lagging: (runId: string, acknowledged: number) =>
            this.log.warn(
              { run_id: runId, replicas: acknowledged, wanted: options.replicaWait!.replicas },
              `run ${runId}: a step's end reached ${acknowledged} of ${options.replicaWait!.replicas} replica(s) within ${options.replicaWait!.timeoutMs} ms; a failover now could lose it`,
            ),
        },
      }),
    });
    this.runsQueue = quiet(new Queue<RunJobData>(QueueName.RUNS, queueOptions(redis, prefix)));
    const layout = options.layout ?? ShardLayout.single(prefix);
    this.pauses = new RedisPauseBook(redis, layout.home);
    this.slots = new ConcurrencySlots(redis, layout);
    this.pausesRead = this.pauses.watch().catch((err: unknown) => {
      // Redis away at the start: the book reads the pauses again on its timer.
      this.log.warn({ err: String(err) }, `could not read the pauses in force: ${String(err)}`);
    });
    this.toolsQueue = quiet(new Queue<ToolJobData>(QueueName.TOOLS, queueOptions(redis, prefix)));
    this.inbox = new ResultInbox(redis, prefix, this.toolsQueue);
    this.dispatcher = new QueueDispatcher(
      this.toolsQueue,
      this.inbox,
      redis,
      prefix,
      options.tools,
      (call) => this.mayStart(call.runId),
    );
    this.subscriber = this.own(redis);
    void this.subscriber.subscribe(runCancelChannel(prefix));
    this.subscriber.on('message', (_c: string, message: string) => {
      const { runId, reason, compensate } = JSON.parse(message) as {
        runId: string;
        reason?: string;
        compensate?: false;
      };
      this.engineOfProject?.cancel(runId, reason, { compensate: compensate ?? true });
    });
    // An outcome no call waits for may be one a parked run waits for.
    this.inbox.onUnexpected = ({ runId }) => {
      if (runId !== undefined)
        void wakeParked(redis, prefix, this.runsQueue, runId).catch(() => {
          // Not woken now (Redis away): the parked run's delayed job wakes it at its deadline.
        });
    };
    this.parkScan = setInterval(() => {
      for (const d of this.driving.values()) d.parkIfIdle();
    }, PARK_AFTER_MS / 2);
    this.parkScan.unref();
    this.lease = new WorkerLease({
      redis,
      prefix,
      names: [name],
      ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }),
      onLost: () => this.lost(),
      onLapsed: (names) =>
        takeOverDeadWorkers(
          { redis, prefix, runs: () => this.runsQueue, tools: () => this.toolsQueue },
          names,
          this.log,
        ),
      logger: this.log,
    });
    this.worker.run().catch((err: unknown) => this.worker.emit('error', err as Error));
  }

  /** How many runs this worker drives now. */
  get drivingCount(): number {
    return this.driving.size;
  }

  /**
   * Stops taking jobs, hands the runs it drives back to the queue (another worker resumes them),
   * waits for signal and cancel jobs under way, then closes its connections.
   */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.parkScan);
    this.dispatcher.queueOnly();
    for (const d of this.driving.values()) d.handOver();
    await this.worker.close();
    await this.engineOfProject?.drain();
    this.engineOfProject?.release();
    await this.lease.close();
    this.pauses.close();
    this.inbox.close();
    await Promise.all([this.runsQueue.close(), this.toolsQueue.close(), this.slots.close()]);
    for (const c of this.owned) c.disconnect();
  }

  private own(redis: RedisClient): RedisClient {
    const c = duplicateOf(redis);
    this.owned.push(c);
    return c;
  }

  private async process(job: RunJob, token: string | undefined): Promise<RunJobResult> {
    await this.pausesRead; // no run takes a step before the pauses in force are known
    this.jobsActive++;
    try {
      return await this.perform(job, token);
    } finally {
      this.jobsActive--;
      this.fitIntake();
    }
  }

  /**
   * Takes no more jobs than leave the run slots room: BullMQ counts jobs, and a group of starts
   * is one job holding many runs, so while runs wait for slots another worker takes the next job.
   */
  private fitIntake(): void {
    const extra = Math.max(0, this.held.size - this.jobsActive);
    this.worker.concurrency = Math.max(1, this.concurrency - extra);
  }

  private async perform(job: RunJob, token: string | undefined): Promise<RunJobResult> {
    const data = job.data;
    const redelivered = job.attemptsStarted > 1 || job.stalledCounter > 0;
    if (data.kind === 'starts')
      return performStartGroup(
        job,
        token,
        redelivered,
        this.runsQueue,
        this.options.redis,
        this.log,
        (member) => this.processRun(job, token, member, redelivered, true),
      );
    if (data.kind === 'cancel') {
      // The worker driving the run (if one does, this one included) cancels it at once; a run
      // no worker drives is cancelled here, once claimed.
      await this.options.redis.publish(
        runCancelChannel(this.options.prefix),
        JSON.stringify({ runId: data.runId, reason: data.reason, compensate: data.compensate }),
      );
    }
    // A signal for a run this worker drives reaches it here, whatever its steps are doing.
    if (data.kind === 'signal' && this.driving.has(data.runId)) return this.signalHere(data);
    const alone = data.kind === 'start' && data.alone === true;
    return this.processRun(job, token, data, redelivered || alone, false);
  }

  /**
   * Does what a job asks of one run: the job's own run, or (`shared`) one run of a group of
   * starts. A job that cannot be done now comes back later; for a run of a group, which has no job
   * to move, the errors say what happened (see `start-group.ts`): `DelayedError` when another job
   * has the run, `WaitingError` when this worker lost it, and any other error as it is.
   */
  private async processRun(
    job: RunJob,
    token: string | undefined,
    data: OneRunJobData,
    redelivered: boolean,
    shared: boolean,
  ): Promise<RunRecord> {
    // Another job of the run is here: this one comes back later (one of a group is left to it).
    if (this.held.has(data.runId))
      return shared ? Promise.reject(new DelayedError()) : comeBackLater(job, token);
    this.held.add(data.runId);
    if (shared) this.fitIntake();
    try {
      const taken = { job, token, shared };
      return await this.runSlots(() => takeUpRun(this.context(), data, taken, redelivered));
    } finally {
      this.held.delete(data.runId);
      if (shared) this.fitIntake();
    }
  }

  /**
   * Delivers a signal to a run this worker drives (its own job keeps driving it) and resolves
   * with the record once the run ends or waits again.
   */
  private async signalHere(data: Extract<RunJobData, { kind: 'signal' }>): Promise<RunRecord> {
    try {
      const run = await this.engine().deliverSignal(data.runId, data.name, data.payload);
      return await run.settled();
    } catch (err) {
      throw toJobError(err);
    }
  }

  /**
   * Whether a call of `runId` may start now: at once while this worker's lease surely holds;
   * after a pause (or Redis away) as long as it takes a renewal to say, rejecting when the lease
   * had lapsed (the run is lost: another worker may be making this very call).
   */
  private mayStart(runId: string): true | Promise<void> {
    const held = this.lease.confirm();
    if (held === true) return true;
    return held.then((ok) => {
      if (!ok) throw runTakenOver(runId, this.name, '');
    });
  }

  /** This worker's lease lapsed: another worker may hold its runs now, so it stops driving them. */
  private lost(): void {
    if (this.driving.size === 0) return;
    const error = DirigentError.fatal(
      ErrorCode.RUN_TAKEN_OVER,
      `This worker's lease lapsed (it was paused or cut off from Redis for longer than ${this.lease.leaseMs} ms): it stops driving its ${this.driving.size} run(s), which other workers take over.`,
      { details: { worker: this.worker.id } },
    );
    for (const d of [...this.driving.values()]) d.lose(error);
  }

  private context(): DriveContext {
    this.driveContext ??= {
      redis: this.options.redis,
      prefix: this.options.prefix,
      engine: this.engine(),
      store: this.store,
      dispatcher: this.dispatcher,
      runsQueue: this.runsQueue,
      toolsQueue: this.toolsQueue,
      telemetry: this.telemetry,
      log: this.log,
      driving: this.driving,
      pauses: this.pauses,
      slots: this.slots,
      closing: () => this.closing,
      worker: this.name,
      events: this.tell,
    };
    return this.driveContext;
  }

  private engine(): Engine {
    this.engineOfProject ??= workerEngine({
      ...this.options,
      pauses: this.pauses,
      dispatcher: this.dispatcher,
      store: this.store,
      telemetry: this.telemetry,
      lose: (runId, error) => this.driving.get(runId)?.lose(error),
    });
    return this.engineOfProject;
  }
}
