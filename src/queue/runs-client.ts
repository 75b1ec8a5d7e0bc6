/**
 * What the CLI (and later the HTTP API) does against a Redis deployment: enqueue run jobs and wait
 * for their outcome, read run records from the store. Workers do the running.
 */
import { checkSignalPayload } from '../policy/check-json-size.js';
import { loadProjectPolicy } from '../policy/project-policy.js';
import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import type { LoadedDirective } from '../engine/directive-loader.js';
import type { EngineObserver } from '../engine/engine-options.js';
import type { RunRecord } from '../engine/run-record.js';
import { validateInputs } from '../engine/validate-inputs.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { fromJobError } from './job-error.js';
import { QueueName } from './queue-names.js';
import { queueOptions } from './queue-options.js';
import { RedisRunStore, type RunListFilter } from './redis-run-store.js';
import { watchRunEvents } from './run-events.js';
import type { RunJobData } from './run-job.js';
import { Attr } from '../telemetry/attributes.js';
import type { RunTrigger } from '../telemetry/run-trace.js';
import { SPAN_KIND, Telemetry, type TelemetryOptions } from '../telemetry/telemetry.js';

/**
 * Finished run jobs leave BullMQ at once (whoever waits hears the outcome from the events stream;
 * the run record lives in the store); failed ones stay a while, for inspection.
 */
const RUN_JOB_RETENTION = { removeOnComplete: true, removeOnFail: { age: 86_400, count: 1000 } };

/** Starts, signals, cancels and reads runs on a Redis deployment. */
export class RunsClient {
  readonly store: RedisRunStore;
  private readonly queue: Queue<RunJobData, RunRecord>;
  private events: QueueEvents | undefined;
  /** BullMQ does not close a connection it is given: the client closes its own. */
  private eventsConnection: Redis | undefined;
  private readonly telemetry: Telemetry | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    telemetry?: Telemetry | TelemetryOptions,
  ) {
    this.telemetry = Telemetry.of(telemetry);
    this.store = new RedisRunStore(redis, { prefix });
    this.queue = new Queue<RunJobData, RunRecord>(QueueName.RUNS, queueOptions(redis, prefix));
  }

  /**
   * Validates the inputs (throwing `INVALID_INPUTS` before anything is enqueued) and enqueues the
   * run. Returns its id at once with `detach`, else waits for it to end or wait.
   */
  async start(
    loaded: LoadedDirective,
    inputs: Record<string, unknown>,
    projectDir: string,
    options: { detach?: boolean; observer?: EngineObserver; trigger?: RunTrigger } = {},
  ): Promise<{ runId: string; record?: RunRecord }> {
    const valid = validateInputs(
      loaded.compiled.directive,
      inputs,
      loadProjectPolicy(projectDir).limits,
    );
    const runId = randomUUID();
    const trigger = options.trigger ?? 'library';
    const t = this.telemetry;
    const trace = t?.newRunTrace(runId, trigger);
    const data: RunJobData = {
      kind: 'start',
      runId,
      source: { file: loaded.file, text: loaded.text },
      inputs: valid,
      projectDir,
      trigger,
      ...(trace && { trace }),
      ...(options.observer && { watch: true }),
    };
    // The run's trace begins here: a span for handing the run to the queue, under the run's own.
    const span =
      trace &&
      t?.startSpan(
        `start ${loaded.itemId}`,
        {
          kind: SPAN_KIND.PRODUCER,
          attributes: {
            [Attr.MESSAGING_SYSTEM]: 'bullmq',
            [Attr.MESSAGING_DESTINATION]: QueueName.RUNS,
            [Attr.MESSAGING_OPERATION_TYPE]: 'send',
            [Attr.MESSAGING_MESSAGE_ID]: runId,
            [Attr.RUN_ID]: runId,
            [Attr.DIRECTIVE_ID]: loaded.itemId,
            [Attr.RUN_TRIGGER]: trigger,
          },
        },
        trace,
      );
    let enqueued = false;
    const added = () => {
      if (!enqueued) span?.end();
      enqueued = true;
    };
    if (options.detach) {
      await this.queue.add('start', data, { jobId: runId, ...RUN_JOB_RETENTION }).finally(added);
      return { runId };
    }
    const stop = options.observer
      ? await watchRunEvents(this.redis, this.prefix, runId, options.observer)
      : undefined;
    try {
      return { runId, record: await this.submit('start', data, runId, added) };
    } finally {
      added();
      stop?.();
    }
  }

  /** Delivers a signal to a waiting run and waits for it to end or wait again. */
  async signal(
    runId: string,
    name: string,
    payload: unknown,
    projectDir: string,
    observer?: EngineObserver,
  ): Promise<RunRecord> {
    checkSignalPayload(name, payload, loadProjectPolicy(projectDir).limits);
    const stop = observer
      ? await watchRunEvents(this.redis, this.prefix, runId, observer)
      : undefined;
    try {
      return await this.submit('signal', {
        kind: 'signal',
        runId,
        name,
        payload,
        projectDir,
        ...(observer && { watch: true }),
      });
    } finally {
      stop?.();
    }
  }

  /** Cancels a run (stopping its tools on whichever worker runs them) and waits for the outcome. */
  async cancel(runId: string, projectDir: string, reason?: string): Promise<RunRecord> {
    await this.status(runId);
    return this.submit('cancel', {
      kind: 'cancel',
      runId,
      projectDir,
      ...(reason !== undefined && { reason }),
    });
  }

  /** The run's record; `RUN_NOT_FOUND` when the store has none (never ran, or expired). */
  async status(runId: string): Promise<RunRecord> {
    const run = await this.store.load(runId);
    if (run === undefined) {
      throw DirigentError.fatal(ErrorCode.RUN_NOT_FOUND, `No run with id ${runId}.`, {
        hint: 'List runs with `dirigent runs`; finished runs expire after the retention period.',
      });
    }
    return run.record;
  }

  /** How many workers take run jobs right now. */
  workers(): Promise<number> {
    return this.queue.getWorkersCount();
  }

  /** Run records, newest first. */
  list(filter: RunListFilter = {}): Promise<RunRecord[]> {
    return this.store.list(filter);
  }

  async close(): Promise<void> {
    await Promise.all([this.queue.close(), this.events?.close()]);
    this.eventsConnection?.disconnect();
  }

  private async submit(
    name: string,
    data: RunJobData,
    jobId?: string,
    added?: () => void,
  ): Promise<RunRecord> {
    if (this.events === undefined) {
      this.eventsConnection = this.redis.duplicate();
      this.events = new QueueEvents(QueueName.RUNS, {
        connection: this.eventsConnection,
        prefix: this.prefix,
      });
    }
    await this.events.waitUntilReady();
    const job = await this.queue.add(name, data, {
      ...(jobId !== undefined && { jobId }),
      ...RUN_JOB_RETENTION,
    });
    added?.();
    try {
      return await job.waitUntilFinished(this.events);
    } catch (err) {
      throw fromJobError(err, `run ${data.runId}`);
    }
  }
}
