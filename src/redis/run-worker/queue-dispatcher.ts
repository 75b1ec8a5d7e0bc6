/**
 * The tool dispatcher of a distributed engine: a call becomes a job on the tools queue, run by
 * whichever worker takes it, and the call resolves with the job's result, which the worker sends
 * to this process's {@link ResultInbox}. Cancelling the call (a step timeout, a cancelled run) is
 * announced to the workers, and the one running the job stops the tool (killing its process
 * group). A call that a resumed run makes again is looked up first: a job that already ended
 * answers it at once. The dispatcher knows each run's calls under way, so that a run worker can
 * let a run go (park it) while its jobs go on.
 *
 * Eager calls: when a tool worker runs in this process, a step's call that the engine offers to
 * run here (`ToolCall.inProcess`) and that is not made again after a resume runs on it, at once
 * if it has a free slot or as soon as one frees within a moment, when no lock or rate limit
 * applies (Temporal's eager activities): no job, no queue hop. Such a call holds its run here:
 * the run is not parked, and is handed back only once the call has ended.
 */
import { randomUUID } from 'node:crypto';
import { Job, type Queue } from 'bullmq';
import type { RedisClient } from '../redis-client.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { abortError } from '../../tools/abort-error.js';
import { BuiltinDispatcher } from '../../tools/builtin-dispatcher.js';
import type { ToolCall } from '../../tools/tool-call.js';
import type { ToolDescription, ToolDispatcher } from '../../tools/tool-dispatcher.js';
import { fromJobError } from '../job-error.js';
import { cancelChannel } from '../queue-names.js';
import type { ResultInbox } from '../result-inbox.js';
import { toolJobData, toolJobId, type ToolJobData } from '../tool-job.js';
import type { CallOutcome } from '../tool-worker/tool-executor.js';
import type { ToolWorker } from '../tool-worker/tool-worker.js';

/**
 * How long, and how many, finished tool jobs are kept: a run resumed after a crash finds the
 * results of its calls among them (older calls would run again); the caps keep Redis flat.
 */
export const TOOL_JOB_RETENTION = {
  completed: { age: 3600, count: 10_000 },
  failed: { age: 86_400, count: 10_000 },
} as const;

/**
 * A run's calls under way in one drive of it: as jobs, and in this process (by job id), when the
 * last was made, and whether the drive let the run go (see {@link QueueDispatcher.abandon}).
 */
interface OpenCalls {
  jobIds: Set<string>;
  here: Map<string, Promise<unknown>>;
  lastAt: number;
  /** Set when the drive let the run go: what its calls fail with. */
  letGo: DirigentError | undefined;
}

/** A {@link ToolDispatcher} that runs calls as BullMQ jobs, or in process (see the module comment). */
export class QueueDispatcher implements ToolDispatcher {
  private readonly builtins = new BuiltinDispatcher();
  /** Each run's calls under way. */
  private readonly open = new Map<string, OpenCalls>();
  /** Set when the run worker closes: calls go to the queue from then on. */
  private closing = false;

  /**
   * `local`: the tool worker of this process, if there is one, for eager calls. `mayStart`: true
   * when this process may start a call of the run now, or a promise that rejects when it may not
   * (its worker's lease lapsed, and another worker may be driving the run: see `worker-lease.ts`).
   */
  constructor(
    private readonly queue: Queue<ToolJobData>,
    private readonly inbox: ResultInbox,
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly local?: ToolWorker,
    private readonly mayStart?: (call: ToolCall) => true | Promise<void>,
  ) {}

  /** Makes no more calls in process: every call is a job from now on (the run worker closes). */
  queueOnly(): void {
    this.closing = true;
  }

  /** The built-in tools' descriptions (their retry policies); others are known to workers only. */
  describe(itemId: string): ToolDescription | undefined {
    return this.builtins.describe(itemId);
  }

  async dispatch(call: ToolCall): Promise<unknown> {
    const label = `tool ${call.itemId}`;
    if (call.signal.aborted) throw abortError(call.signal, label);
    const jobId = toolJobId(call, randomUUID);
    // Opened before the first wait, so that a drive letting the run go meanwhile is seen below.
    const open = this.opened(call.runId);
    try {
      const may = this.mayStart?.(call);
      if (may !== undefined && may !== true) await may;
      if (open.letGo) throw open.letGo;
      const here = this.runHere(call, jobId);
      if (here !== undefined) {
        open.here.set(jobId, here);
        const ran = await here;
        open.here.delete(jobId);
        if (ran?.ok === true) return ran.value;
        if (ran?.ok === false) throw ran.error;
        // Aborted while it waited for a slot here: no job for it.
        if (call.signal.aborted) throw abortError(call.signal, label);
      }
      open.jobIds.add(jobId);
      await this.inbox.whenReady();
      const earlier = call.repeated ? await this.earlierJob(jobId) : undefined;
      if (earlier?.finishedOn !== undefined) {
        if (earlier.failedReason) throw fromJobError(earlier.failedReason, label);
        return earlier.returnvalue;
      }
      if (open.letGo) {
        // Let go while the job was looked up (parked, say): the run counts on the job all the
        // same, so it is added, unwaited; its end wakes the run, which finds its outcome by id.
        if (earlier === undefined) await this.enqueue(call, jobId).catch(() => undefined);
        throw open.letGo;
      }
      const outcome = this.inbox.expect(jobId, label);
      // Heard at once: the run may be parked (its expectations abandoned) while the job is
      // still being added, as when Redis is away for a failover; `outcomeOf` hears it again.
      outcome.catch(() => undefined);
      const job = earlier ?? (await this.add(call, jobId));
      return await this.outcomeOf(job, outcome, call.signal, label, open);
    } finally {
      open.jobIds.delete(jobId);
      open.here.delete(jobId);
      const idle = open.jobIds.size === 0 && open.here.size === 0;
      if (idle && this.open.get(call.runId) === open) this.open.delete(call.runId);
    }
  }

  /**
   * The calls of a run under way (as jobs, and in this process), and when its last call was made;
   * undefined when it has none (see {@link abandon}).
   */
  openCalls(runId: string): { count: number; inProcess: number; lastAt: number } | undefined {
    const open = this.open.get(runId);
    return open && { count: open.jobIds.size, inProcess: open.here.size, lastAt: open.lastAt };
  }

  /** Resolves once the run's calls in this process have ended (their outcomes went to the run). */
  async inProcessEnded(runId: string): Promise<void> {
    const here = this.open.get(runId)?.here;
    if (here !== undefined && here.size > 0) await Promise.allSettled(here.values());
  }

  /** Stops the run's calls in this process (the run was lost: another worker resumes it). */
  stopInProcess(runId: string): void {
    for (const jobId of this.open.get(runId)?.here.keys() ?? []) this.local?.stopHere(jobId);
  }

  /**
   * Stops waiting for the run's tool jobs, which go on running: their calls fail with `error`
   * (the run was let go first, so nothing hears it). Returns the jobs' ids. From then on, what the
   * drive that let the run go still does cancels none of them: they are the run's, and whoever
   * drives it next (here or elsewhere) waits for them under the same ids.
   */
  abandon(runId: string, error: DirigentError): string[] {
    const open = this.open.get(runId);
    if (open === undefined) return [];
    open.letGo = error;
    this.open.delete(runId);
    const jobIds = [...open.jobIds];
    this.inbox.abandon(jobIds, error);
    return jobIds;
  }

  /** The run's open calls, one more call made now. */
  private opened(runId: string): OpenCalls {
    let open = this.open.get(runId);
    if (open === undefined) {
      open = { jobIds: new Set(), here: new Map(), lastAt: 0, letGo: undefined };
      this.open.set(runId, open);
    }
    open.lastAt = Date.now();
    return open;
  }

  /**
   * The call run in this process (see the module comment); undefined, or resolving undefined,
   * when it goes to the queue: it was not offered, it is made again after a resume (its job may
   * exist), the worker closes, or the local tool worker has no room for it or declines it.
   */
  private runHere(call: ToolCall, jobId: string): Promise<CallOutcome | undefined> | undefined {
    if (call.inProcess === undefined || call.repeated || this.closing) return undefined;
    return this.local?.runHere(call, jobId);
  }

  /**
   * The job of a call made before the run was resumed, if it is still kept. One still to finish
   * is told to send its outcome here (the process that made it may be gone).
   */
  private async earlierJob(jobId: string): Promise<Job<ToolJobData> | undefined> {
    const job = await Job.fromId<ToolJobData>(this.queue, jobId);
    if (job === undefined || job.finishedOn !== undefined) return job;
    if (job.data.replyTo !== this.inbox.id)
      await job.updateData({ ...job.data, replyTo: this.inbox.id }).catch(() => {
        /* Finished meanwhile, or Redis away: the inbox's sweep reads the job's outcome itself. */
      });
    return job;
  }

  /** Adds the call's job, waited for here (see {@link enqueue}). */
  private async add(call: ToolCall, jobId: string): Promise<Job<ToolJobData>> {
    const adding = this.enqueue(call, jobId);
    this.inbox.track(adding);
    return adding.catch((err: unknown) => {
      this.inbox.forget(jobId);
      throw DirigentError.from(err);
    });
  }

  /** Adds the call's job; its outcome goes to this process's inbox. */
  private enqueue(call: ToolCall, jobId: string): Promise<Job<ToolJobData>> {
    return this.queue.add(
      'tool',
      { ...toolJobData(call), replyTo: this.inbox.id },
      {
        jobId,
        attempts: 1,
        removeOnComplete: TOOL_JOB_RETENTION.completed,
        removeOnFail: TOOL_JOB_RETENTION.failed,
      },
    );
  }

  /**
   * The job's outcome, or the call's abort, which stops the job wherever it runs, unless the drive
   * that made the call let its run go (`open`): the job is then another drive's to wait for.
   */
  private async outcomeOf(
    job: Job<ToolJobData>,
    outcome: Promise<unknown>,
    signal: AbortSignal,
    label: string,
    open: OpenCalls,
  ): Promise<unknown> {
    const jobId = job.id!;
    const stop = () => {
      if (open.letGo !== undefined) return;
      this.inbox.forget(jobId);
      void this.cancel(job).catch(noCancel);
    };
    if (signal.aborted) {
      // Aborted while the job was being enqueued (or looked up): stop it now.
      stop();
      throw abortError(signal, label);
    }
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        stop();
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
    await job.remove().catch(() => {
      /* Active (the message above reaches its worker) or gone: nothing left to remove. */
    });
  }
}

/**
 * A cancellation that did not reach Redis. Nothing waits for the call any more (the inbox forgot
 * it), and the worker running it still stops it at the step's deadline.
 */
function noCancel(): void {
  // Best effort: see above.
}
