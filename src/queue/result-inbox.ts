/**
 * Where the results of tool jobs come back to the process that enqueued them: the worker that
 * finished a job publishes its outcome on the inbox's channel, once BullMQ has recorded it, and the
 * waiting call resolves. This is one message per call, where waiting through the queue's events
 * stream costs several reads. A message can be lost (the inbox reconnecting, a job finished
 * before it was enqueued again by a resumed run), so calls still open after a while are checked
 * against the job itself.
 */
import { randomUUID } from 'node:crypto';
import { Job, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { DirigentError, type SerializedError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { fromJobError } from './job-error.js';

/** What a worker publishes when a job it ran has finished. */
export type JobOutcome =
  | { jobId: string; ok: true; value: unknown }
  | { jobId: string; ok: false; error: SerializedError };

/** How often, and after how long, open calls are checked against their jobs. */
const SWEEP_MS = 2000;

/** The channel of one inbox. */
export function inboxChannel(prefix: string, inbox: string): string {
  return `${prefix}:results:${inbox}`;
}

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
  private readonly sub: Redis;
  private readonly sweeper: NodeJS.Timeout;
  private readonly ready: Promise<unknown>;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly queue: Queue,
  ) {
    this.sub = redis.duplicate();
    this.sub.on('message', (_c: string, message: string) =>
      this.settle(JSON.parse(message) as JobOutcome),
    );
    this.ready = this.sub.subscribe(inboxChannel(prefix, this.id));
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_MS);
    this.sweeper.unref();
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

  /** Stops waiting for a job (its call was cancelled). */
  forget(jobId: string): void {
    this.pending.delete(jobId);
  }

  close(): void {
    clearInterval(this.sweeper);
    this.sub.disconnect();
  }

  private settle(outcome: JobOutcome): void {
    const p = this.pending.get(outcome.jobId);
    if (p === undefined) return;
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
      const job = await Job.fromId(this.queue, jobId).catch(() => null);
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
