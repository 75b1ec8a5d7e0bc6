/**
 * The tool dispatcher of a distributed engine: every call becomes a job on the tools queue, run by
 * whichever worker takes it, and the call resolves with the job's result, which the worker sends
 * to this process's {@link ResultInbox}. Cancelling the call (a
 * step timeout, a cancelled run) is announced to the workers, and the one running the job stops
 * the tool (killing its process group).
 */
import { randomUUID } from 'node:crypto';
import type { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { DirigentError } from '../errors/dirigent-error.js';
import { abortError } from '../tools/abort-error.js';
import { BuiltinDispatcher } from '../tools/builtin-dispatcher.js';
import type { ToolCall } from '../tools/tool-call.js';
import type { ToolDescription, ToolDispatcher } from '../tools/tool-dispatcher.js';
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
    await this.inbox.whenReady();
    const outcome = this.inbox.expect(jobId, label);
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
    const job = await adding.catch((err: unknown) => {
      this.inbox.forget(jobId);
      throw DirigentError.from(err);
    });
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        this.inbox.forget(jobId);
        void this.cancel(job).catch(() => undefined);
        reject(abortError(call.signal, label));
      };
      call.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([outcome, aborted]);
    } catch (err) {
      if (call.signal.aborted) throw abortError(call.signal, label);
      throw DirigentError.from(err);
    } finally {
      call.signal.removeEventListener('abort', onAbort!);
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
