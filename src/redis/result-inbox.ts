/**
 * Where the results of tool jobs come back to the process that enqueued them: the worker that
 * finished a job publishes its outcome on the inbox's channel, once BullMQ has recorded it, and the
 * waiting call resolves. This is one message per call, where waiting through the queue's events
 * stream costs several reads. A message can be lost (the inbox reconnecting, a job finished
 * before it was enqueued again by a resumed run), so calls still open after a while are checked
 * against the job itself. A tool worker in the same process as the inbox hands the outcome over
 * directly instead ({@link ResultInbox.handOver}), which is how a run advances in the worker that
 * finished its step.
 */
import { duplicateOf } from './redis-connection.js';
import { randomUUID } from 'node:crypto';
import { Job, type Queue } from 'bullmq';
import type { RedisClient } from './redis-client.js';
import { DirigentError, type SerializedError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { fromJobError } from './job-error.js';

/** What a worker publishes when a job it ran has finished. */
export type JobOutcome = { jobId: string; /** The run that made the call. */ runId?: string } & (
  | { ok: true; value: unknown }
  | { ok: false; error: SerializedError }
);

/** How often, and after how long, open calls are checked against their jobs. */
const SWEEP_MS = 2000;

/** The channel of one inbox. */
export function inboxChannel(prefix: string, inbox: string): string {
  return `${prefix}:results:${inbox}`;
}

/** The inboxes open in this process, by id. */
const inThisProcess = new Map<string, ResultInbox>();

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: DirigentError) => void;
  since: number;
  checkedAt: number;
  label: string;
}

/** One process's inbox of tool job results. */
export class ResultInbox {
  /** The inbox's id, which tool jobs carry as `replyTo`. */
  readonly id = randomUUID();
  private readonly pending = new Map<string, Pending>();
  private readonly sub: RedisClient;
  private readonly sweeper: NodeJS.Timeout;
  private readonly ready: Promise<unknown>;
  /**
   * Told of an outcome published here that no call waits for (its call was cancelled, or its run
   * was let go and may need waking: see parked-runs.ts).
   */
  onUnexpected: ((outcome: JobOutcome) => void) | undefined;
  /** Enqueues under way of the calls this inbox expects. */
  private readonly adding = new Set<Promise<unknown>>();

  /** The inbox of this process with id `id`, if there is one. */
  static inThisProcess(id: string | undefined): ResultInbox | undefined {
    return id === undefined ? undefined : inThisProcess.get(id);
  }

  constructor(
    redis: RedisClient,
    private readonly prefix: string,
    private readonly queue: Queue,
  ) {
    this.sub = duplicateOf(redis);
    this.sub.on('message', (_c: string, message: string) =>
      this.settle(JSON.parse(message) as JobOutcome),
    );
    this.ready = this.sub.subscribe(inboxChannel(prefix, this.id));
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_MS);
    this.sweeper.unref();
    inThisProcess.set(this.id, this);
  }

  /** Resolves once the inbox listens; call before {@link expect}. */
  whenReady(): Promise<unknown> {
    return this.ready;
  }

  /**
   * Resolves with the job's result, or rejects with its error. Call it before enqueueing the job,
   * so that no outcome can come before anyone waits for it.
   */
  expect(jobId: string, label: string): Promise<unknown> {
    return new Promise((resolve, reject) =>
      this.pending.set(jobId, { resolve, reject, since: Date.now(), checkedAt: Date.now(), label }),
    );
  }

  /** Registers the enqueue of an expected call's job, so that {@link handOver} can wait for it. */
  track(add: Promise<unknown>): void {
    this.adding.add(add);
    const done = () => this.adding.delete(add);
    add.then(done, done);
  }

  /**
   * Settles a call waiting here with the outcome of its job, as a message would, and resolves
   * once the run has reacted: its engine has gone as far as it can and the jobs it enqueued in
   * response (the next step's) are in the queue. Resolves false if no call waits for the job.
   * A worker calls this before it reports the job finished, so that BullMQ hands it the job
   * the outcome caused in the same round trip (as a job that enqueues its successor does).
   */
  async handOver(outcome: JobOutcome): Promise<boolean> {
    if (!this.pending.has(outcome.jobId)) return false;
    this.settle(outcome);
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.allSettled(this.adding);
    return true;
  }

  /** Stops waiting for a job (its call was cancelled). */
  forget(jobId: string): void {
    this.pending.delete(jobId);
  }

  /** Stops waiting for these jobs, failing their calls with `error` (their run was let go). */
  abandon(jobIds: Iterable<string>, error: DirigentError): void {
    for (const jobId of jobIds) {
      const p = this.pending.get(jobId);
      if (p === undefined) continue;
      this.pending.delete(jobId);
      p.reject(error);
    }
  }

  close(): void {
    inThisProcess.delete(this.id);
    clearInterval(this.sweeper);
    this.sub.disconnect();
  }

  private settle(outcome: JobOutcome): void {
    const p = this.pending.get(outcome.jobId);
    if (p === undefined) {
      this.onUnexpected?.(outcome);
      return;
    }
    this.pending.delete(outcome.jobId);
    if (outcome.ok) p.resolve(outcome.value);
    else p.reject(DirigentError.fromJSON(outcome.error));
  }

  /**
   * Checks calls open for a while against their jobs: a finished one settles its call. A call is
   * checked less often the longer it runs (after half its age, at most every 30 s), so many long
   * tool calls cost little.
   */
  private async sweep(): Promise<void> {
    const now = Date.now();
    const due = [...this.pending].filter(
      ([, p]) => now - p.checkedAt >= Math.min(30_000, Math.max(SWEEP_MS, (now - p.since) / 2)),
    );
    for (const [jobId, p] of due) {
      p.checkedAt = now;
      const job = await Job.fromId(this.queue, jobId).catch(() => {
        /* Redis did not answer: the next sweep asks again (null: unknown, not gone). */
        return null;
      });
      if (!this.pending.has(jobId)) continue;
      if (job === undefined) {
        // Gone without a word to us: finished and already removed, or removed by hand.
        this.pending.delete(jobId);
        p.reject(
          DirigentError.retryable(
            ErrorCode.INTERNAL,
            `The outcome of ${p.label} (job ${jobId}) was lost: the job is gone from the queue.`,
            {
              hint: 'The step is retried per its <retry> policy; lost outcomes mean the inbox lost its connection to Redis.',
            },
          ),
        );
        continue;
      }
      if (job === null || job.finishedOn === undefined) continue;
      this.pending.delete(jobId);
      if (job.failedReason) p.reject(fromJobError(job.failedReason, p.label));
      else p.resolve(job.returnvalue);
    }
  }
}
