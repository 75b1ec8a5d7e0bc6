/**
 * The tool dispatcher of a distributed engine: every call becomes a job on the tools queue, run by
 * whichever worker takes it, and the call resolves with the job's result, which the worker sends
 * to this process's {@link ResultInbox}. Cancelling the call (a step timeout, a cancelled run) is
 * announced to the workers, and the one running the job stops the tool (killing its process
 * group). A call that a resumed run makes again is looked up first: a job that already ended
 * answers it at once. The dispatcher knows each run's calls under way, so that a run worker can
 * let a run go (park it) while its jobs go on.
 */
import { randomUUID } from 'node:crypto';
import { Job, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { DirigentError } from '../errors/dirigent-error.js';
import { abortError } from '../tools/abort-error.js';
import { BuiltinDispatcher } from '../tools/builtin-dispatcher.js';
import type { ToolCall } from '../tools/tool-call.js';
import type { ToolDescription, ToolDispatcher } from '../tools/tool-dispatcher.js';
import { fromJobError } from './job-error.js';
import { cancelChannel } from './queue-names.js';
import type { ResultInbox } from './result-inbox.js';
import { toolJobData, toolJobId, type ToolJobData } from './tool-job.js';

/**
 * How long, and how many, finished tool jobs are kept: a run resumed after a crash finds the
 * results of its calls among them (older calls would run again); the caps keep Redis flat.
 */
export const TOOL_JOB_RETENTION = {
  completed: { age: 3600, count: 10_000 },
  failed: { age: 86_400, count: 10_000 },
} as const;

/** A {@link ToolDispatcher} that runs every call as a BullMQ job. */
export class QueueDispatcher implements ToolDispatcher {
  private readonly builtins = new BuiltinDispatcher();
  /** Each run's tool jobs under way, and when its last call was made. */
  private readonly open = new Map<string, { jobIds: Set<string>; lastAt: number }>();

  constructor(
    private readonly queue: Queue<ToolJobData>,
    private readonly inbox: ResultInbox,
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** The built-in tools' descriptions (their retry policies); others are known to workers only. */
  describe(itemId: string): ToolDescription | undefined {
    return this.builtins.describe(itemId);
  }

  async dispatch(call: ToolCall): Promise<unknown> {
    const label = `tool ${call.itemId}`;
    if (call.signal.aborted) throw abortError(call.signal, label);
    const jobId = toolJobId(call, randomUUID);
    const open = this.opened(call.runId, jobId);
    try {
      await this.inbox.whenReady();
      const earlier = call.repeated ? await this.earlierJob(jobId) : undefined;
      if (earlier?.finishedOn !== undefined) {
        if (earlier.failedReason) throw fromJobError(earlier.failedReason, label);
        return earlier.returnvalue;
      }
      const outcome = this.inbox.expect(jobId, label);
      const job = earlier ?? (await this.add(call, jobId));
      return await this.outcomeOf(job, outcome, call.signal, label);
    } finally {
      open.jobIds.delete(jobId);
      if (open.jobIds.size === 0) this.open.delete(call.runId);
    }
  }

  /**
   * The tool jobs of a run under way, and when its last call was made; undefined when it has
   * none (see {@link abandon}).
   */
  openCalls(runId: string): { count: number; lastAt: number } | undefined {
    const open = this.open.get(runId);
    return open && { count: open.jobIds.size, lastAt: open.lastAt };
  }

  /**
   * Stops waiting for the run's tool jobs, which go on running: their calls fail with `error`
   * (the run was let go first, so nothing hears it). Resolves with the jobs' ids.
   */
  abandon(runId: string, error: DirigentError): string[] {
    const jobIds = [...(this.open.get(runId)?.jobIds ?? [])];
    this.inbox.abandon(jobIds, error);
    return jobIds;
  }

  private opened(runId: string, jobId: string): { jobIds: Set<string>; lastAt: number } {
    let open = this.open.get(runId);
    if (open === undefined) {
      open = { jobIds: new Set(), lastAt: 0 };
      this.open.set(runId, open);
    }
    open.jobIds.add(jobId);
    open.lastAt = Date.now();
    return open;
  }

  /**
   * The job of a call made before the run was resumed, if it is still kept. One still to finish
   * is told to send its outcome here (the process that made it may be gone).
   */
  private async earlierJob(jobId: string): Promise<Job<ToolJobData> | undefined> {
    const job = await Job.fromId<ToolJobData>(this.queue, jobId);
    if (job === undefined || job.finishedOn !== undefined) return job;
    if (job.data.replyTo !== this.inbox.id)
      await job.updateData({ ...job.data, replyTo: this.inbox.id }).catch(() => undefined);
    return job;
  }

  private async add(call: ToolCall, jobId: string): Promise<Job<ToolJobData>> {
    const adding = this.queue.add(
      'tool',
      { ...toolJobData(call), replyTo: this.inbox.id },
      {
        jobId,
        attempts: 1,
        removeOnComplete: TOOL_JOB_RETENTION.completed,
        removeOnFail: TOOL_JOB_RETENTION.failed,
      },
    );
    this.inbox.track(adding);
    return adding.catch((err: unknown) => {
      this.inbox.forget(jobId);
      throw DirigentError.from(err);
    });
  }

  /** The job's outcome, or the call's abort (which stops the job wherever it runs). */
  private async outcomeOf(
    job: Job<ToolJobData>,
    outcome: Promise<unknown>,
    signal: AbortSignal,
    label: string,
  ): Promise<unknown> {
    const jobId = job.id!;
    if (signal.aborted) {
      // Aborted while the job was being enqueued (or looked up): stop it now.
      this.inbox.forget(jobId);
      void this.cancel(job).catch(() => undefined);
      throw abortError(signal, label);
    }
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        this.inbox.forget(jobId);
        void this.cancel(job).catch(() => undefined);
        reject(abortError(signal, label));
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([outcome, aborted]);
    } catch (err) {
      if (signal.aborted) throw abortError(signal, label);
      throw DirigentError.from(err);
    } finally {
      signal.removeEventListener('abort', onAbort!);
    }
  }

  /**
   * Stops the job: the worker running it (or taking it up from now on: every worker remembers the
   * cancellations it heard) aborts it; a job still waiting or deferred is removed.
   */
  private async cancel(job: Job<ToolJobData>): Promise<void> {
    await this.redis.publish(cancelChannel(this.prefix), job.id!);
    await job.remove().catch(() => undefined); // active (the message reaches it) or gone
  }
}
