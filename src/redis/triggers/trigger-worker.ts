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
 * A job's data is `{directive, inputs?, idempotencyKey?, reuse?, wait?}`; its return value is the run's id,
 * or with `wait` (seconds) the run's record once it ends or waits (or as it stands then). A job
 * names its run: without an idempotency key of its own, the job's id is the key, so a job taken up
 * again after its worker died starts no second run. A directive that does not exist, inputs that
 * fail validation or malformed data fail the job at once, unretried, with the error as
 * `dirigent-error:{"code": …, "message": …}` in its `failedReason`.
 */
import { duplicateOf } from '../redis-connection.js';
import { Worker, type Job } from 'bullmq';
import type { RedisClient } from '../redis-client.js';
import type { RunRecord } from '../../engine/run-record.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { toJobError } from '../job-error.js';
import { QueueName } from '../queue-names.js';
import type { RunTrigger } from '../../telemetry/run-trace.js';
import type { Logger } from '../../telemetry/logger.js';
import type { StartRequest, StartedRun } from '../../operations/start-request.js';
import { triggerData } from './trigger-job-data.js';

/** What a trigger worker starts runs with: the operations' start, wait and schedules (a `Dirigent`). */
export interface TriggerTarget {
  start(request: StartRequest): Promise<StartedRun>;
  wait(runId: string, options: { timeoutMs?: number }): Promise<RunRecord>;
  syncSchedules(): Promise<{ kept: number; removed: string[] }>;
}

/** Takes trigger jobs and starts their runs through the operations; `close()` stops it. */
export class TriggerWorker {
  readonly worker: Worker<unknown, string | RunRecord>;
  private readonly connection: RedisClient;

  constructor(
    private readonly dirigent: TriggerTarget,
    redis: RedisClient,
    prefix: string,
    concurrency = 20,
  ) {
    this.connection = duplicateOf(redis);
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
      ...(data.reuse !== undefined && { reuse: data.reuse }),
      ...(data.tags !== undefined && { tags: data.tags }),
      ...(data.priority !== undefined && { priority: data.priority }),
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
