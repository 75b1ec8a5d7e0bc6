/**
 * The worker side of tool jobs: takes jobs from the tools queue and runs each through the item
 * dispatcher of its project (built-ins, then the project's, user's and system spaces). A
 * cancellation announced for a running job aborts it, which stops the tool and kills its process
 * group; a worker that dies mid-job loses nothing: BullMQ hands the stalled job to another.
 */
import { loadProjectPolicy } from '../policy/project-policy.js';
import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { DirigentError } from '../errors/dirigent-error.js';
import { ItemResolver } from '../items/item-resolver.js';
import { defaultSpaces } from '../items/space.js';
import { ItemDispatcher } from '../tools/item-dispatcher.js';
import type { LockSlot } from '../locks/keyed-semaphore.js';
import { fromJobError, toJobError } from './job-error.js';
import { ResultInbox, type JobOutcome } from './result-inbox.js';
import { replyToCaller, type ToolOutcome } from './reply-to-caller.js';
import { takeOverDeadWorkers, workerLost } from './reap-dead-worker.js';
import { leaseName, WorkerLease } from './worker-lease.js';
import { passGate } from './tool-gate.js';
import { cancelled, deferJob, remember, stopAt } from './tool-job-stops.js';
import { checkToolHash } from './run-source.js';
import { resolve } from 'node:path';
import { queueOptions } from './queue-options.js';
import type { RunJobData } from './run-job.js';
import { cancelChannel, QueueName } from './queue-names.js';
import type { ToolJobData } from './tool-job.js';
import { bullWorkerTiming, workerTiming, type WorkerTiming } from './worker-timing.js';
import { recordLockWait, ToolJobSpan } from './job-spans.js';
import { failureOutcome } from '../telemetry/failure-outcome.js';
import { Telemetry, type TelemetryOptions } from '../telemetry/telemetry.js';
import { SILENT_LOGGER, traceFields, type Logger } from '../telemetry/logger.js';

/** What a tool worker needs. */
export interface ToolWorkerOptions {
  /** Connection for BullMQ (blocking commands) and for the worker's own reads. */
  redis: Redis;
  prefix: string;
  /**
   * The project this worker serves: tools resolve in it and are confined to it, whatever machine
   * made the call (default: the current folder).
   */
  projectDir?: string;
  /** Tool jobs run at once in this process (default 8). */
  concurrency?: number;
  timing?: WorkerTiming;
  /**
   * This worker's lease, ms: others take its jobs over this long after it stops renewing it (see
   * `worker-lease.ts`; default `DIRIGENT_WORKER_LEASE_MS`, else 3 s).
   */
  leaseMs?: number;
  /** Where the tool jobs' spans and metrics go (see `telemetry/telemetry.ts`); default none. */
  telemetry?: Telemetry | TelemetryOptions;
  /** Where the worker logs failed tool jobs (default: nowhere). */
  logger?: Logger;
}

/** A running tool worker; `close()` finishes the jobs under way, then stops. */
export class ToolWorker {
  readonly worker: Worker<ToolJobData>;
  private readonly running = new Map<string, { controller: AbortController; data: ToolJobData }>();
  /** Jobs whose cancellation this worker heard, newest last, for a job it takes up afterwards. */
  private readonly cancelled = new Set<string>();
  /** Jobs whose outcome went straight to an inbox of this process (no message to publish). */
  private readonly handedOver = new Set<string>();
  /** The dispatcher of the project served, made on first use. */
  private projectDispatcher: ItemDispatcher | undefined;
  private readonly projectDir: string;
  private readonly subscriber: Redis;
  /** BullMQ does not close a connection it is given: this worker closes its own. */
  private readonly bullConnection: Redis;
  private runs: Queue<RunJobData> | undefined;
  private tools: Queue<ToolJobData> | undefined;
  private readonly lease: WorkerLease;
  private readonly telemetry: Telemetry | undefined;
  private readonly log: Logger;

  constructor(private readonly options: ToolWorkerOptions) {
    this.telemetry = Telemetry.of(options.telemetry);
    this.log = options.logger ?? SILENT_LOGGER;
    this.projectDir = resolve(options.projectDir ?? process.cwd());
    this.subscriber = options.redis.duplicate();
    this.bullConnection = options.redis.duplicate();
    void this.subscriber.subscribe(cancelChannel(options.prefix));
    this.subscriber.on('message', (_channel: string, jobId: string) => this.stop(jobId));
    this.worker = new Worker<ToolJobData>(
      QueueName.TOOLS,
      (job, token) => this.process(job, token),
      {
        connection: this.bullConnection,
        prefix: options.prefix,
        concurrency: options.concurrency ?? 8,
        ...bullWorkerTiming(options.timing ?? workerTiming()),
      },
    );
    // Outcomes go to the caller's inbox once BullMQ has recorded them.
    this.worker.on('completed', (job, value) => this.reply(job, { ok: true, value }));
    this.worker.on('failed', (job, err) => {
      if (job)
        this.reply(job, { ok: false, error: fromJobError(err, `tool job ${job.id}`).toJSON() });
    });
    this.lease = new WorkerLease({
      redis: options.redis,
      prefix: options.prefix,
      names: [leaseName(QueueName.TOOLS, this.worker.id)],
      ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }),
      onLost: () => this.lost(),
      onLapsed: (names) =>
        takeOverDeadWorkers(
          {
            redis: options.redis,
            prefix: options.prefix,
            runs: () => this.runsQueue(),
            tools: () => this.toolsQueue(),
          },
          names,
          this.log,
        ),
      logger: this.log,
    });
  }

  /**
   * This worker's lease lapsed: its jobs are failed as lost and retried elsewhere, so the tools
   * still running here are stopped rather than run twice at once.
   */
  private lost(): void {
    if (this.running.size === 0) return;
    this.log.warn(
      { worker: this.worker.id, jobs: this.running.size },
      `this worker's lease lapsed (it was paused or cut off from Redis): stopping ${this.running.size} tool job(s) that other workers now retry`,
    );
    for (const { controller, data } of this.running.values())
      controller.abort(workerLost(data, this.worker.id));
  }

  private toolsQueue(): Queue<ToolJobData> {
    this.tools ??= new Queue<ToolJobData>(
      QueueName.TOOLS,
      queueOptions(this.options.redis, this.options.prefix),
    );
    return this.tools;
  }

  private reply(job: Job<ToolJobData>, outcome: ToolOutcome): void {
    if (this.handedOver.delete(job.id!)) return;
    const { redis, prefix } = this.options;
    void replyToCaller(redis, prefix, job, outcome, () => this.runsQueue()).catch(() => undefined);
  }

  /** The runs queue, to wake parked runs (made on first use: most workers never need it). */
  private runsQueue(): Queue<RunJobData> {
    this.runs ??= new Queue<RunJobData>(
      QueueName.RUNS,
      queueOptions(this.options.redis, this.options.prefix),
    );
    return this.runs;
  }

  /** Waits for the jobs under way, then closes the connections and the tools' warm processes. */
  async close(): Promise<void> {
    await this.worker.close();
    await this.lease.close();
    await this.projectDispatcher?.close();
    await this.runs?.close();
    await this.tools?.close();
    this.subscriber.disconnect();
    this.bullConnection.disconnect();
  }

  /**
   * Runs the job. When the run that made the call is driven in this process, the outcome goes to
   * it before the job is reported finished: the run advances here, and the job of its next step
   * is in the queue by the time BullMQ moves this one on, so this worker takes it up in the same
   * round trip. Otherwise the outcome is published once BullMQ has recorded it.
   */
  private async process(job: Job<ToolJobData>, token: string | undefined): Promise<unknown> {
    const outcome = await this.run(job, token);
    const inbox = ResultInbox.inThisProcess(job.data.replyTo);
    const { runId } = job.data;
    const reply: JobOutcome = outcome.ok
      ? { jobId: job.id!, runId, ok: true, value: outcome.value }
      : { jobId: job.id!, runId, ok: false, error: outcome.error.toJSON() };
    if (inbox !== undefined && (await inbox.handOver(reply))) remember(this.handedOver, job.id!);
    if (!outcome.ok) throw toJobError(outcome.error);
    return outcome.value;
  }

  /** The tool's outcome, once it has passed its gate and run (a deferral throws `DelayedError`). */
  private async run(
    job: Job<ToolJobData>,
    token: string | undefined,
  ): Promise<{ ok: true; value: unknown } | { ok: false; error: DirigentError }> {
    const id = job.id!;
    const { redis, prefix } = this.options;
    const d = job.data;
    const controller = new AbortController();
    this.running.set(id, { controller, data: d });
    let slots: LockSlot[] = [];
    let deadline: NodeJS.Timeout | undefined;
    const t = this.telemetry;
    const span = t && ToolJobSpan.start(t, QueueName.TOOLS, job);
    try {
      if (this.cancelled.has(id)) throw cancelled(id);
      const projectDir = this.projectDir;
      const dispatcher = this.dispatcher();
      const chain = dispatcher.isBuiltin(d.itemId)
        ? undefined
        : await dispatcher.chainOf(d.itemId, projectDir);
      if (chain !== undefined) await checkToolHash(d.itemId, chain[0]!.file, d.toolHash);
      const tool = chain?.[0]!.item;
      const gateAt = Date.now();
      const gate = await passGate(redis, prefix, d.gate, tool, d.params);
      const gated = {
        lock: d.gate?.concurrency !== undefined || tool?.concurrency !== undefined,
        rate: d.gate?.rateLimit !== undefined || tool?.rateLimit !== undefined,
      };
      if (gated.lock || gated.rate) {
        const since = d.firstDeferredAt ?? gateAt;
        span?.lockWait(since, 'blockedBy' in gate ? gate.blockedBy : undefined);
        if (t && !('blockedBy' in gate)) recordLockWait(t, Date.now() - since, gated);
      }
      if ('blockedBy' in gate) {
        span?.finish('deferred');
        return await deferJob(job, token, gate.retryAfterMs);
      }
      slots = gate.slots;
      const signal =
        slots.length > 0
          ? AbortSignal.any([controller.signal, ...slots.map((s) => s.signal)])
          : controller.signal;
      if (d.deadline !== undefined) deadline = stopAt(d.deadline, controller, d.step);
      const call = { ...d, projectDir, signal, ...(span && { traceparent: span.traceparent }) };
      const value = await dispatcher.dispatch(call, chain);
      span?.finish('completed');
      return { ok: true, value };
    } catch (err) {
      if (err instanceof DelayedError) throw err;
      const error = DirigentError.from(controller.signal.aborted ? controller.signal.reason : err);
      span?.finish(failureOutcome(error), error);
      this.log.warn(
        {
          ...traceFields(d.runId, span?.span),
          tool: d.itemId,
          step: d.step,
          error_code: error.code,
        },
        `tool ${d.itemId} failed: ${error.message}`,
      );
      return { ok: false, error };
    } finally {
      clearTimeout(deadline);
      this.running.delete(id);
      await Promise.all(slots.map((s) => s.release()));
    }
  }

  private stop(jobId: string): void {
    remember(this.cancelled, jobId);
    this.running.get(jobId)?.controller.abort(cancelled(jobId));
  }

  private dispatcher(): ItemDispatcher {
    this.projectDispatcher ??= new ItemDispatcher(
      new ItemResolver(defaultSpaces(this.projectDir)),
      {
        limits: loadProjectPolicy(this.projectDir).limits,
        ...(this.telemetry && { telemetry: this.telemetry }),
      },
    );
    return this.projectDispatcher;
  }
}
