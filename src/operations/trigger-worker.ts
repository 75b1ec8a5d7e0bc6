/**
 * The queue trigger: a documented BullMQ queue, `dirigent-triggers` under the deployment's key
 * prefix, whose jobs start runs, so that any BullMQ client in any language starts directives:
 *
 * ```python
 * from bullmq import Queue
 * queue = Queue("dirigent-triggers", {"connection": "redis://127.0.0.1:6379", "prefix": "dirigent"})
 * await queue.add("run", {"directive": "hello", "inputs": {"name": "Ada"}})
 * ```
 *
 * A job's data is `{directive, inputs?, idempotencyKey?, wait?}`; its return value is the run's id,
 * or with `wait` (seconds) the run's record once it ends or waits (or as it stands then). A job
 * names its run: without an idempotency key of its own, the job's id is the key, so a job taken up
 * again after its worker died starts no second run. A directive that does not exist, inputs that
 * fail validation or malformed data fail the job at once, unretried, with the error as
 * `dirigent-error:{"code": …, "message": …}` in its `failedReason`.
 */
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RunRecord } from '../engine/run-record.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { toJobError } from '../queue/job-error.js';
import { QueueName } from '../queue/queue-names.js';
import type { RunTrigger } from '../telemetry/run-trace.js';
import type { Logger } from '../telemetry/logger.js';
import type { Dirigent } from './dirigent.js';

/** What a trigger job carries. */
export interface TriggerJobData {
  /** The directive's item id. */
  directive: string;
  inputs?: Record<string, unknown>;
  /** Starts one run per key within its window (default: the job's own id). */
  idempotencyKey?: string;
  /** Answer with the run's record once it ends or waits, waiting at most this many seconds (≤ 600). */
  wait?: number;
}

/** The most a trigger job may wait for its run, seconds. */
export const MAX_TRIGGER_WAIT_S = 600;

/** Takes trigger jobs and starts their runs through the operations; `close()` stops it. */
export class TriggerWorker {
  readonly worker: Worker<unknown, string | RunRecord>;
  private readonly connection: Redis;

  constructor(
    private readonly dirigent: Dirigent,
    redis: Redis,
    prefix: string,
    concurrency = 20,
  ) {
    this.connection = redis.duplicate();
    this.worker = new Worker<unknown, string | RunRecord>(
      QueueName.TRIGGERS,
      async (job) => {
        try {
          return await this.process(job);
        } catch (err) {
          throw toJobError(err);
        }
      },
      { connection: this.connection, prefix, concurrency },
    );
  }

  private async process(job: Job<unknown>): Promise<string | RunRecord> {
    const data = triggerData(job.data);
    // Jobs a job scheduler adds (`dirigent schedule`) are named `schedule`.
    const trigger: RunTrigger = job.name === 'schedule' ? 'schedule' : 'queue';
    const { runId } = await this.dirigent.start({
      directive: data.directive,
      inputs: data.inputs ?? {},
      idempotencyKey: data.idempotencyKey ?? `job:${job.id}`,
      trigger,
    });
    if (data.wait === undefined) return runId;
    return this.dirigent.wait(runId, { timeoutMs: data.wait * 1000 });
  }

  /**
   * Registers the schedules the project's directives declare (see `Dirigent.syncSchedules`), as a
   * worker does when it starts; failures are logged, not thrown: serving goes on.
   */
  async syncSchedules(log: Logger): Promise<void> {
    try {
      const { kept, removed } = await this.dirigent.syncSchedules();
      if (kept > 0 || removed.length > 0)
        log.info(
          { schedules: kept, removed },
          `schedules of the project's directives: ${kept} registered${removed.length > 0 ? `, ${removed.length} removed` : ''}`,
        );
    } catch (err) {
      const e = DirigentError.from(err);
      log.warn(
        { error_code: e.code },
        `could not register the directives' schedules: ${e.message}`,
      );
    }
  }

  async close(): Promise<void> {
    await this.worker.close();
    this.connection.disconnect();
  }
}

/** A trigger job's data, checked: `INVALID_REQUEST` naming what is wrong. */
export function triggerData(data: unknown): TriggerJobData {
  const bad = (what: string) =>
    DirigentError.fatal(ErrorCode.INVALID_REQUEST, `A trigger job's data ${what}.`, {
      hint: 'Add jobs with data {"directive": "<item id>", "inputs": {…}, "idempotencyKey"?: "…", "wait"?: seconds}.',
    });
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw bad('is not a JSON object');
  const d = data as Record<string, unknown>;
  const known = new Set(['directive', 'inputs', 'idempotencyKey', 'wait']);
  const unknown = Object.keys(d).filter((k) => !known.has(k));
  if (unknown.length > 0) throw bad(`has unknown fields: ${unknown.join(', ')}`);
  if (typeof d.directive !== 'string' || d.directive === '')
    throw bad('needs "directive", the item id of a directive');
  if (
    d.inputs !== undefined &&
    (d.inputs === null || typeof d.inputs !== 'object' || Array.isArray(d.inputs))
  )
    throw bad('has "inputs" that is not an object of names to values');
  if (d.idempotencyKey !== undefined && typeof d.idempotencyKey !== 'string')
    throw bad('has an "idempotencyKey" that is not a string');
  if (
    d.wait !== undefined &&
    !(typeof d.wait === 'number' && d.wait >= 0 && d.wait <= MAX_TRIGGER_WAIT_S)
  )
    throw bad(`has a "wait" that is not a number of seconds from 0 to ${MAX_TRIGGER_WAIT_S}`);
  return d as unknown as TriggerJobData;
}
