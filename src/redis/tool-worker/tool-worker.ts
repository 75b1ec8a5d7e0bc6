/**
 * The worker side of tool jobs: takes jobs from the tools queue and runs each through the item
 * dispatcher of its project (built-ins, then the project's, user's and system spaces). A
 * cancellation announced for a running job aborts it, which stops the tool and kills its process
 * group; a worker that dies mid-job loses nothing: another fails the job as lost (`WORKER_LOST`,
 * an attempt of its step) and the step is retried.
 *
 * A run worker in the same process may hand a call to it directly instead of enqueueing a job
 * (an eager call, {@link ToolWorker.runHere}): when no lock or rate limit applies, the call runs
 * at once if a slot is free, or as soon as one frees within a moment (`slot-waits.ts`), with no
 * queue hop and no job written.
 */
import { quiet, duplicateOf } from '../redis-connection.js';
import { Queue, Worker, type Job } from 'bullmq';
import type { RedisClient } from '../redis-client.js';
import type { ToolCall } from '../../tools/tool-call.js';
import { workerLost } from '../../tools/worker-lost.js';
import { Telemetry } from '../../telemetry/telemetry.js';
import { SILENT_LOGGER, type Logger } from '../../telemetry/logger.js';
import { fromJobError, toJobError } from '../job-error.js';
import { ranInProcess, recordLockWait, ToolJobSpan } from '../job-spans.js';
import { cancelChannel, QueueName } from '../queue-names.js';
import { queueOptions } from '../queue-options.js';
import { takeOverDeadWorkers } from '../takeover/reap-dead-worker.js';
import { replyToCaller, type ToolOutcome } from './reply-to-caller.js';
import { ResultInbox, type JobOutcome } from '../result-inbox.js';
import type { RunJobData } from '../run-job.js';
import { passGate } from './tool-gate.js';
import { ToolExecutor, type CallOutcome } from './tool-executor.js';
import { deferJob, remember } from './tool-job-stops.js';
import { SlotWaits } from './slot-waits.js';
import { toolJobData, type ToolJobData } from '../tool-job.js';
import { leaseName, WorkerLease } from '../takeover/worker-lease.js';
import { bullWorkerTiming, workerTiming } from '../worker-timing.js';
import { failureOutcome } from '../../telemetry/failure-outcome.js';
import type { DirigentError } from '../../errors/dirigent-error.js';
import type { ToolWorkerOptions } from './tool-worker-options.js';

export type * from './tool-worker-options.js';

/** A running tool worker; `close()` finishes the calls under way, then stops. */
export class ToolWorker {
  readonly worker: Worker<ToolJobData>;
  /** Jobs whose outcome went straight to an inbox of this process (no message to publish). */
  private readonly handedOver = new Set<string>();
  private readonly calls: ToolExecutor;
  private readonly concurrency: number;
  /** Calls run in process ({@link runHere}) under way; {@link close} waits for them. */
  private readonly inProcess = new Set<Promise<unknown>>();
  /** Calls offered to run in process, waiting for a slot. */
  private readonly slotWaits: SlotWaits;
  private closing = false;
  private readonly subscriber: RedisClient;
  /** BullMQ does not close a connection it is given: this worker closes its own. */
  private readonly bullConnection: RedisClient;
  private runs: Queue<RunJobData> | undefined;
  private tools: Queue<ToolJobData> | undefined;
  private readonly lease: WorkerLease;
  private readonly telemetry: Telemetry | undefined;
  private readonly log: Logger;
  /**
   * This worker's name in the deployment (its lease name, `dirigent-tools/<BullMQ worker id>`):
   * the `worker` of its events.
   */
  readonly name: string;

  constructor(private readonly options: ToolWorkerOptions) {
    this.telemetry = Telemetry.of(options.telemetry);
    this.slotWaits = new SlotWaits(options.slotWaitMs);
    const log = (this.log = options.logger ?? SILENT_LOGGER);
    this.calls = new ToolExecutor({
      projectDir: options.projectDir ?? process.cwd(),
      telemetry: this.telemetry,
      log,
      ended: () => {
        if (this.calls.size < this.concurrency) this.slotWaits.handOver();
      },
    });
    this.concurrency = options.concurrency ?? 8;
    this.subscriber = duplicateOf(options.redis);
    this.bullConnection = duplicateOf(options.redis);
    void this.subscriber.subscribe(cancelChannel(options.prefix));
    this.subscriber.on('message', (_channel: string, jobId: string) => this.calls.stop(jobId));
    this.worker = new Worker<ToolJobData>(
      QueueName.TOOLS,
      (job, token) => this.process(job, token),
      {
        connection: this.bullConnection,
        prefix: options.prefix,
        concurrency: this.concurrency,
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
      names: [(this.name = leaseName(QueueName.TOOLS, this.worker.id))],
      ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }),
      onLost: () => this.lost(log),
      onLapsed: (names) =>
        takeOverDeadWorkers(
          {
            redis: options.redis,
            prefix: options.prefix,
            runs: () => this.runsQueue(),
            tools: () => this.toolsQueue(),
          },
          names,
          log,
        ),
      logger: log,
    });
  }

  /**
   * Runs `call` in this process (an eager call) and resolves with its outcome, when the worker is
   * not closing and no lock or rate limit applies to it (the step's or the tool's, which only the
   * queue enforces): at once if a slot is free, else as soon as one frees, if one does within
   * the worker's `slotWaitMs` (`slot-waits.ts`). Resolves (or returns) undefined otherwise, and
   * the caller enqueues a job. The call is told through `call.inProcess` before the tool starts,
   * and stops when `call.signal` aborts, at its deadline, or when this worker's lease lapses.
   */
  runHere(call: ToolCall, jobId: string): Promise<CallOutcome | undefined> | undefined {
    if (this.closing || call.gate !== undefined) return undefined;
    if (this.calls.size < this.concurrency && this.slotWaits.size === 0)
      return this.runNow(call, jobId);
    return this.slotWaits.waitMs > 0 ? this.runOnceFree(call, jobId) : undefined;
  }

  /** Calls offered to run in process that wait for a slot now (see {@link runHere}). */
  get waitingForSlot(): number {
    return this.slotWaits.size;
  }

  /** Runs `call` when a slot frees (see {@link runHere}); undefined if none does in time. */
  private async runOnceFree(call: ToolCall, jobId: string): Promise<CallOutcome | undefined> {
    if (call.signal.aborted) return undefined;
    const waited = this.slotWaits.wait(jobId);
    this.fitJobSlots();
    const aborted = () => this.slotWaits.end(jobId, 'queue');
    call.signal.addEventListener('abort', aborted, { once: true });
    const how = await waited;
    call.signal.removeEventListener('abort', aborted);
    this.fitJobSlots();
    if (how === 'lost') return { ok: false, error: workerLost(toolJobData(call), this.worker.id) };
    if (how === 'queue' || this.closing || call.signal.aborted) return undefined;
    return this.runNow(call, jobId);
  }

  /** Runs `call` in this process now (see {@link runHere}). */
  private runNow(call: ToolCall, jobId: string): Promise<CallOutcome | undefined> {
    const d = toolJobData(call);
    const t = this.telemetry;
    // The step attempt's span stands for the call when the engine says so; else it has its own.
    const folded = t && call.spanAttributes;
    const ran = this.calls.run(
      jobId,
      d,
      async (tool) => {
        if (tool?.concurrency !== undefined || tool?.rateLimit !== undefined) return 'declined';
        call.inProcess?.(this.worker.id);
        if (folded) ranInProcess(t, folded);
        return { slots: [], span: t && !folded ? ToolJobSpan.inProcess(t, d) : undefined };
      },
      { signal: call.signal, ...(folded && { spanAttributes: folded }) },
    );
    this.inProcess.add(ran);
    this.fitJobSlots();
    void ran.finally(() => {
      this.inProcess.delete(ran);
      this.fitJobSlots();
    });
    return ran.then((outcome) => {
      if (outcome?.ok === false) this.failed(d, jobId, outcome.error, true);
      return outcome;
    });
  }

  /** Tells {@link ToolWorkerOptions.events} of a failed call; a listener's error goes no further. */
  private failed(d: ToolJobData, jobId: string, error: DirigentError, inProcess: boolean): void {
    try {
      this.options.events?.('tool:failed', {
        worker: this.name,
        runId: d.runId,
        step: d.step,
        itemId: d.itemId,
        attempt: d.attempt,
        jobId,
        inProcess,
        outcome: failureOutcome(error),
        error: { code: error.code, message: error.message },
        retryable: error.retryable,
      });
    } catch (err) {
      this.log.error(
        { event: 'tool:failed', run_id: d.runId, err: String(err) },
        `a listener of tool:failed threw: ${String(err)}`,
      );
    }
  }

  /**
   * Jobs take the slots that calls in process, and those waiting to run in process, leave free
   * (BullMQ takes at least one job at a time, so at most one more than the concurrency runs when
   * calls in process fill it).
   */
  private fitJobSlots(): void {
    this.worker.concurrency = Math.max(
      1,
      this.concurrency - this.inProcess.size - this.slotWaits.size,
    );
  }

  /**
   * Stops a call {@link runHere} runs, or waits to run: its run was lost here, and whoever resumes
   * it (this worker included) makes the call again under the same id, so the stop is not
   * remembered as a cancel.
   */
  stopHere(jobId: string): void {
    if (this.slotWaits.end(jobId, 'lost')) return;
    this.calls.stopRunning(jobId, (data) => workerLost(data, this.worker.id));
  }

  /**
   * This worker's lease lapsed: its jobs are failed as lost and retried elsewhere, so the tools
   * still running here are stopped rather than run twice at once.
   */
  private lost(log: Logger): void {
    if (this.calls.size === 0) return;
    log.warn(
      { worker: this.worker.id, jobs: this.calls.size },
      `this worker's lease lapsed (it was paused or cut off from Redis): stopping ${this.calls.size} tool call(s) that other workers now retry`,
    );
    this.calls.stopAll((data) => workerLost(data, this.worker.id));
  }

  private toolsQueue(): Queue<ToolJobData> {
    this.tools ??= quiet(
      new Queue<ToolJobData>(
        QueueName.TOOLS,
        queueOptions(this.options.redis, this.options.prefix),
      ),
    );
    return this.tools;
  }

  private reply(job: Job<ToolJobData>, outcome: ToolOutcome): void {
    if (this.handedOver.delete(job.id!)) return;
    const { redis, prefix } = this.options;
    void replyToCaller(redis, prefix, job, outcome, () => this.runsQueue()).catch((err: unknown) =>
      // The outcome is kept with the job all the same: the run finds it when it looks (resumed,
      // or woken at its deadline); it only hears of it later.
      this.log.warn(
        { job_id: job.id, run_id: job.data.runId, err: String(err) },
        `could not tell the run of tool job ${job.id} its outcome at once: ${String(err)}`,
      ),
    );
  }

  /** The runs queue, to wake parked runs (made on first use: most workers never need it). */
  private runsQueue(): Queue<RunJobData> {
    this.runs ??= quiet(
      new Queue<RunJobData>(QueueName.RUNS, queueOptions(this.options.redis, this.options.prefix)),
    );
    return this.runs;
  }

  /**
   * Takes no more calls in process, waits for the jobs and calls under way, then closes the
   * connections and the tools' warm processes.
   */
  async close(): Promise<void> {
    this.closing = true;
    this.slotWaits.endAll('queue');
    await this.worker.close();
    await Promise.allSettled(this.inProcess);
    await this.lease.close();
    await this.calls.close();
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
    if (!outcome.ok) this.failed(job.data, job.id!, outcome.error, false);
    const inbox = ResultInbox.inThisProcess(job.data.replyTo);
    const { runId } = job.data;
    const reply: JobOutcome = outcome.ok
      ? { jobId: job.id!, runId, ok: true, value: outcome.value }
      : { jobId: job.id!, runId, ok: false, error: outcome.error.toJSON() };
    if (inbox !== undefined && (await inbox.handOver(reply))) remember(this.handedOver, job.id!);
    if (!outcome.ok) throw toJobError(outcome.error);
    return outcome.value;
  }

  /** The job's outcome, once it has passed its gate and run (a deferral throws `DelayedError`). */
  private async run(job: Job<ToolJobData>, token: string | undefined): Promise<CallOutcome> {
    const { redis, prefix } = this.options;
    const d = job.data;
    const t = this.telemetry;
    const span = t && ToolJobSpan.start(t, QueueName.TOOLS, job);
    const outcome = await this.calls.run(
      job.id!,
      d,
      async (tool) => {
        const gateAt = Date.now();
        const gate = await passGate(redis, this.options.layout ?? prefix, d.gate, tool, d.params);
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
        return { slots: gate.slots };
      },
      { span },
    );
    return outcome!; // a job's admission never declines: it defers
  }
}
