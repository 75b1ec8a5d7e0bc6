/**
 * A Redis deployment as the operations see it (`operations/redis-backend.ts`): enqueue run jobs,
 * hear how runs end, read run records from the store. Workers do the running.
 */
import { randomUUID } from 'node:crypto';
import { Job, Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import type { EngineObserver } from '../engine/engine-options.js';
import { queuedRecord, type RunRecord } from '../engine/run-record.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { fromJobError } from './job-error.js';
import { QueueName } from './queue-names.js';
import { queueOptions } from './queue-options.js';
import { RedisRunStore, type RunListFilter } from './redis-run-store.js';
import { watchRunEvents } from './run-events.js';
import type { RunJobData, RunSource } from './run-job.js';
import { Attr } from '../telemetry/attributes.js';
import type { RunTrigger } from '../telemetry/run-trace.js';
import { SPAN_KIND, Telemetry, type TelemetryOptions } from '../telemetry/telemetry.js';

/**
 * Finished run jobs leave BullMQ at once (whoever waits hears the outcome from the events stream;
 * the run record lives in the store); failed ones stay a while, for inspection.
 */
const RUN_JOB_RETENTION = { removeOnComplete: true, removeOnFail: { age: 86_400, count: 1000 } };

/** How often {@link RunsClient.wait} looks at the store, besides hearing of run jobs that end. */
const WAIT_POLL_MS = 1000;

/** Whoever waits for a run to end or wait. */
interface Waiter {
  settled: (record: RunRecord) => void;
  failed: (error: DirigentError) => void;
}

/** Starts, signals, cancels and reads runs on a Redis deployment. */
export class RunsClient {
  readonly store: RedisRunStore;
  private readonly queue: Queue<RunJobData, RunRecord>;
  private events: Promise<QueueEvents> | undefined;
  /** BullMQ does not close a connection it is given: the client closes its own. */
  private eventsConnection: Redis | undefined;
  private readonly telemetry: Telemetry | undefined;
  private readonly waiters = new Map<string, Set<Waiter>>();

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
   * Enqueues a run of `source` with `inputs` (validated by the caller: see `operations/`) under
   * `runId` (default a new UUID) and resolves with its id once the job is in the queue. A job
   * with that id already there is left as it is (BullMQ keeps one job per id).
   */
  async start(
    source: RunSource,
    inputs: Record<string, unknown>,
    options: {
      runId?: string;
      trigger?: RunTrigger;
      /** Someone watches: the workers publish the run's progress (see run-events.ts). */
      watch?: boolean;
    } = {},
  ): Promise<string> {
    const runId = options.runId ?? randomUUID();
    const trigger = options.trigger ?? 'library';
    const t = this.telemetry;
    const trace = t?.newRunTrace(runId, trigger);
    const data: RunJobData = {
      kind: 'start',
      runId,
      source,
      inputs,
      trigger,
      ...(trace && { trace }),
      ...(options.watch === true && { watch: true }),
    };
    // The run's trace begins here: a span for handing the run to the queue, under the run's own.
    const span =
      trace &&
      t?.startSpan(
        `start ${source.directive}`,
        {
          kind: SPAN_KIND.PRODUCER,
          attributes: {
            [Attr.MESSAGING_SYSTEM]: 'bullmq',
            [Attr.MESSAGING_DESTINATION]: QueueName.RUNS,
            [Attr.MESSAGING_OPERATION_TYPE]: 'send',
            [Attr.MESSAGING_MESSAGE_ID]: runId,
            [Attr.RUN_ID]: runId,
            [Attr.DIRECTIVE_ID]: source.directive,
            [Attr.RUN_TRIGGER]: trigger,
          },
        },
        trace,
      );
    try {
      await this.queue.add('start', data, { jobId: runId, ...RUN_JOB_RETENTION });
    } finally {
      span?.end();
    }
    return runId;
  }

  /**
   * The run's record once it ends or waits, or as it stands after `timeoutMs`; rejects with the
   * error of a start job that failed (the run never began: a directive the workers do not have,
   * say) and with `RUN_NOT_FOUND` for a run that neither exists nor is queued.
   */
  async wait(runId: string, timeoutMs?: number): Promise<RunRecord> {
    await this.listening();
    let waiter!: Waiter;
    const outcome = new Promise<RunRecord>((settled, failed) => {
      waiter = { settled, failed };
    });
    let set = this.waiters.get(runId);
    if (set === undefined) this.waiters.set(runId, (set = new Set()));
    set.add(waiter);
    // Listening first, then looking: an end that comes in between is heard, not missed.
    const look = async () => {
      const record = await this.status(runId).catch((err: unknown) => {
        waiter.failed(DirigentError.from(err));
        return undefined;
      });
      if (record !== undefined && record.status !== 'running' && record.status !== 'queued')
        waiter.settled(record);
    };
    void look();
    const poll = setInterval(() => void look(), WAIT_POLL_MS);
    let timer: NodeJS.Timeout | undefined;
    const late =
      timeoutMs === undefined
        ? outcome
        : new Promise<RunRecord>((resolve, reject) => {
            timer = setTimeout(() => void this.status(runId).then(resolve, reject), timeoutMs);
          });
    try {
      return await Promise.race([outcome, late]);
    } finally {
      clearInterval(poll);
      clearTimeout(timer);
      set.delete(waiter);
      if (set.size === 0) this.waiters.delete(runId);
    }
  }

  /** Delivers a signal to a waiting run and waits for it to end or wait again. */
  async signal(runId: string, name: string, payload: unknown, watch = false): Promise<RunRecord> {
    return this.submit('signal', {
      kind: 'signal',
      runId,
      name,
      payload,
      ...(watch && { watch: true }),
    });
  }

  /** Cancels a run (stopping its tools on whichever worker runs them) and waits for the outcome. */
  async cancel(runId: string, reason?: string): Promise<RunRecord> {
    await this.status(runId);
    return this.submit('cancel', {
      kind: 'cancel',
      runId,
      ...(reason !== undefined && { reason }),
    });
  }

  /**
   * The run's record: from the store, or `queued` while its start job waits for a worker;
   * `RUN_NOT_FOUND` when there is neither (never started, or expired).
   */
  async status(runId: string): Promise<RunRecord> {
    const run = await this.store.load(runId);
    if (run !== undefined) return run.record;
    const job = await Job.fromId<RunJobData, RunRecord>(this.queue, runId);
    if (job !== undefined && job.data.kind === 'start') {
      if (job.failedReason) throw fromJobError(job.failedReason, `run ${runId}`);
      return queuedRecord(runId, job.data.source.directive, job.timestamp);
    }
    // Between the two reads a worker may have taken the job up, saved the run and completed the
    // job (which removes it): the store holds the run now.
    const saved = await this.store.load(runId);
    if (saved !== undefined) return saved.record;
    throw DirigentError.fatal(ErrorCode.RUN_NOT_FOUND, `No run with id ${runId}.`, {
      hint: 'List runs (`dirigent runs`, `GET /v1/runs`); ended runs are kept for the retention period.',
    });
  }

  /** Replays a run's progress (published by workers for runs started or signalled with `watch`). */
  watchEvents(runId: string, observer: EngineObserver): Promise<() => void> {
    return watchRunEvents(this.redis, this.prefix, runId, observer);
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
    await Promise.all([this.queue.close(), this.events?.then((e) => e.close())]);
    this.eventsConnection?.disconnect();
  }

  /** The runs queue's events, heard from the first call on: run jobs that end tell their waiters. */
  private listening(): Promise<QueueEvents> {
    this.events ??= (async () => {
      this.eventsConnection = this.redis.duplicate();
      const events = new QueueEvents(QueueName.RUNS, {
        connection: this.eventsConnection,
        prefix: this.prefix,
      });
      events.on('completed', ({ returnvalue }) => {
        const record = parseRecord(returnvalue);
        if (record === undefined || record.status === 'running') return;
        for (const w of this.waiters.get(record.runId) ?? []) w.settled(record);
      });
      // A start job fails only when its run could not begin: its id is the run's.
      events.on('failed', ({ jobId, failedReason }) => {
        const set = this.waiters.get(jobId);
        if (set === undefined) return;
        const error = fromJobError(failedReason, `run ${jobId}`);
        for (const w of set) w.failed(error);
      });
      await events.waitUntilReady();
      return events;
    })();
    return this.events;
  }

  private async submit(name: string, data: RunJobData): Promise<RunRecord> {
    const events = await this.listening();
    const job = await this.queue.add(name, data, RUN_JOB_RETENTION);
    try {
      return await job.waitUntilFinished(events);
    } catch (err) {
      throw fromJobError(err, `run ${data.runId}`);
    }
  }
}

function parseRecord(value: unknown): RunRecord | undefined {
  try {
    const r = (typeof value === 'string' ? JSON.parse(value) : value) as RunRecord | null;
    return r !== null && typeof r === 'object' && typeof r.runId === 'string' ? r : undefined;
  } catch {
    return undefined;
  }
}
