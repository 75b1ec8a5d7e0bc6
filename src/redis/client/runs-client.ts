/**
 * A Redis deployment as the operations see it (`redis/client/redis-backend.ts`): enqueue run jobs,
 * hear how runs end, read run records from the store. Workers do the running.
 */
import { quiet, duplicateOf } from '../redis-connection.js';
import { Job, Queue, QueueEvents } from 'bullmq';
import type { RedisClient } from '../redis-client.js';
import { queuedRecord, type RunRecord } from '../../engine/run-record.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { fromJobError } from '../job-error.js';
import { QueueName } from '../queue-names.js';
import { queueOptions, RUN_JOB_RETENTION } from '../queue-options.js';
import { RedisRunStore, type RunListFilter } from '../run-store/redis-run-store.js';
import type { OneRunJobData, RunJobData, RunJobResult, RunSource } from '../run-job.js';
import { groupJobIdOf } from './start-group-ids.js';
import { randomUUID } from 'node:crypto';
import { ConcurrencySlots, SLOT_WAIT_SAFETY_MS } from '../concurrency-slots.js';
import { ShardLayout } from '../shards/shard-layout.js';
import type { RunConcurrency } from '../../engine/run-concurrency.js';
import { StartSender, type SendOptions, type StartOptions } from './start-sender.js';
import { Telemetry, type TelemetryOptions } from '../../telemetry/telemetry.js';
import type { CancelOptions } from '../../engine/cancel-options.js';
import { runNotFound } from '../../errors/run-errors.js';

/** Paused runs read (and unpause jobs sent) at a time. */
const UNPAUSE_PAGE = 500;

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
  private readonly queue: Queue<RunJobData, RunJobResult>;
  private events: Promise<QueueEvents> | undefined;
  /** BullMQ does not close a connection it is given: the client closes its own. */
  private eventsConnection: RedisClient | undefined;
  private readonly telemetry: Telemetry | undefined;
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly sender: StartSender;
  private readonly slots: ConcurrencySlots;
  /** A new run id of this client's shard. */
  private readonly newKey: () => string;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    telemetry?: Telemetry | TelemetryOptions,
    options: StartOptions & { layout?: ShardLayout } = {},
  ) {
    this.telemetry = Telemetry.of(telemetry);
    this.store = new RedisRunStore(redis, { prefix });
    this.queue = quiet(
      new Queue<RunJobData, RunJobResult>(QueueName.RUNS, queueOptions(redis, prefix)),
    );
    this.sender = new StartSender(this.queue, this.telemetry, options);
    this.newKey = options.newKey ?? randomUUID;
    this.slots = new ConcurrencySlots(redis, options.layout ?? ShardLayout.single(prefix));
  }

  /**
   * Enqueues a run of `source` with `inputs` (validated by the caller: see `operations/`) and
   * resolves with its id once the job that holds it is in the queue. A start given its `runId` is a
   * job of its own, and a job with that id already there is left as it is (BullMQ
   * keeps one job per id). Other starts made in the same turn of the event loop share jobs of up
   * to `startGroup` runs (see `start-group.ts`).
   */
  async start(
    source: RunSource,
    inputs: Record<string, unknown>,
    options: SendOptions & { concurrency?: RunConcurrency } = {},
  ): Promise<string> {
    const { concurrency, ...send } = options;
    if (concurrency === undefined) return this.sender.start(source, inputs, send);
    // A run with a concurrency key takes its slot here, in the order runs are started: its job is
    // added waiting, then goes at once if the run took a slot (else the run that frees one
    // promotes it, see `concurrency-slots.ts`).
    const runId = send.runId ?? this.newKey();
    await this.sender.start(source, inputs, { ...send, runId, delayMs: SLOT_WAIT_SAFETY_MS });
    const admitted = await this.slots.admit(source.directive, concurrency, runId);
    if (admitted !== 'wait') {
      const job = await Job.fromId(this.queue, runId);
      if (job !== undefined && (await job.getState()) === 'delayed') await job.promote();
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
  async signal(runId: string, name: string, payload: unknown): Promise<RunRecord> {
    return this.submit('signal', {
      kind: 'signal',
      runId,
      name,
      payload,
    });
  }

  /**
   * Cancels a run (stopping its tools on whichever worker runs them) and waits for the outcome:
   * after its compensations, unless `options.compensate` is false.
   */
  async cancel(runId: string, reason?: string, options: CancelOptions = {}): Promise<RunRecord> {
    await this.status(runId);
    return this.submit('cancel', {
      kind: 'cancel',
      runId,
      ...(reason !== undefined && { reason }),
      ...(options.compensate === false && { compensate: false as const }),
    });
  }

  /**
   * The run's record: from the store, or `queued` while its start job waits for a worker;
   * `RUN_NOT_FOUND` when there is neither (never started, or expired).
   */
  async status(runId: string): Promise<RunRecord> {
    const run = await this.store.load(runId);
    if (run !== undefined) return run.record;
    const queued = await this.queued(runId);
    if (queued !== undefined) {
      if (queued.failedReason) throw fromJobError(queued.failedReason, `run ${runId}`);
      return queuedRecord(runId, queued.directive, queued.at);
    }
    // Between the two reads a worker may have taken the job up, saved the run and completed the
    // job (which removes it): the store holds the run now.
    const saved = await this.store.load(runId);
    if (saved !== undefined) return saved.record;
    throw runNotFound(runId, 'redis');
  }

  /** The job that holds the run's start (its own, or its group's), if one does. */
  private async queued(
    runId: string,
  ): Promise<{ directive: string; at: number; failedReason: string } | undefined> {
    const job = await Job.fromId<RunJobData, RunJobResult>(this.queue, runId);
    if (job !== undefined && job.data.kind === 'start')
      return {
        directive: job.data.source.directive,
        at: job.timestamp,
        failedReason: job.failedReason,
      };
    const groupId = groupJobIdOf(runId);
    const group = groupId && (await Job.fromId<RunJobData, RunJobResult>(this.queue, groupId));
    if (!group || group.data.kind !== 'starts') return undefined;
    const member = group.data.runs.find((m) => m.runId === runId);
    if (member === undefined) return undefined;
    const { directive } = group.data.sources[member.source]!;
    return { directive, at: group.timestamp, failedReason: group.failedReason };
  }

  /**
   * Sends an `unpause` job for every paused run whose directive `paused` no longer says is
   * paused, in the order the runs started; resolves with how many.
   */
  async unpause(paused: (directive: string) => boolean): Promise<number> {
    const key = this.store.indexKey({ status: 'paused' });
    const ids: string[] = [];
    for (let at = 0; ; at += UNPAUSE_PAGE) {
      const page = await this.redis.zrange(key, at, at + UNPAUSE_PAGE - 1);
      ids.push(...page);
      if (page.length < UNPAUSE_PAGE) break;
    }
    let sent = 0;
    for (let at = 0; at < ids.length; at += UNPAUSE_PAGE) {
      const chunk = ids.slice(at, at + UNPAUSE_PAGE);
      const pipeline = this.redis.pipeline();
      for (const id of chunk) pipeline.hget(this.store.runKey(id), 'directive');
      const directives = (await pipeline.exec()) ?? [];
      const jobs = chunk
        .filter((_, i) => {
          const d = directives[i]?.[1];
          return typeof d === 'string' && !paused(d);
        })
        .map((runId) => ({
          name: 'unpause',
          data: { kind: 'unpause' as const, runId },
          opts: RUN_JOB_RETENTION,
        }));
      if (jobs.length > 0) await this.queue.addBulk(jobs);
      sent += jobs.length;
    }
    return sent;
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
    await this.sender.settle();
    await Promise.all([
      this.queue.close(),
      this.events?.then((e) => e.close()),
      this.slots.close(),
    ]);
    this.eventsConnection?.disconnect();
  }

  /** The runs queue's events, heard from the first call on: run jobs that end tell their waiters. */
  private listening(): Promise<QueueEvents> {
    this.events ??= (async () => {
      this.eventsConnection = duplicateOf(this.redis);
      const events = quiet(
        new QueueEvents(QueueName.RUNS, {
          connection: this.eventsConnection,
          prefix: this.prefix,
        }),
      );
      // Every job waited for (a signal, a cancel, sixteen of a bulk action at once) listens here.
      events.setMaxListeners(0);
      const settle = (records: RunRecord[]) => {
        for (const record of records) {
          if (record.status === 'running') continue;
          for (const w of this.waiters.get(record.runId) ?? []) w.settled(record);
        }
      };
      events.on('completed', ({ returnvalue }) => settle(parseRecords(returnvalue)));
      // The runs of a group of starts that rest before their group completes.
      events.on('progress', ({ data }) => {
        const runs = (data as { runs?: unknown } | null)?.runs;
        if (Array.isArray(runs)) settle(parseRecords(runs));
      });
      // A start job fails only when its run could not begin: its id is the run's. A group fails
      // as a whole only when none of its runs could be told apart (its job was malformed).
      events.on('failed', ({ jobId, failedReason }) => {
        for (const [runId, set] of this.waiters) {
          if (runId !== jobId && groupJobIdOf(runId) !== jobId) continue;
          const error = fromJobError(failedReason, `run ${runId}`);
          for (const w of set) w.failed(error);
        }
      });
      await events.waitUntilReady();
      return events;
    })();
    return this.events;
  }

  /**
   * Asks a worker to redrive a run that failed or was cancelled (see `engine/redrive.ts`); resolves
   * once the job is in the queue, with when the run ends or waits again. Asked twice before a
   * worker takes it up, the run is redriven once (one job per redrive of it).
   */
  async redrive(runId: string, by: string): Promise<{ settled: Promise<RunRecord> }> {
    const record = await this.status(runId);
    const redrives = record.redrives?.length ?? 0;
    const events = await this.listening();
    const job = await this.queue.add(
      'redrive',
      { kind: 'redrive', runId, by, redrives },
      { ...RUN_JOB_RETENTION, jobId: `${runId}.redrive.${redrives}` },
    );
    const settled = this.finished(job, events, runId);
    settled.catch(() => undefined); // heard by whoever awaits it
    return { settled };
  }

  private async submit(name: string, data: OneRunJobData): Promise<RunRecord> {
    const events = await this.listening();
    const job = await this.queue.add(name, data, RUN_JOB_RETENTION);
    return this.finished(job, events, data.runId);
  }

  /** The record a job about one run completes with. */
  private async finished(
    job: Job<RunJobData, RunJobResult>,
    events: QueueEvents,
    runId: string,
  ): Promise<RunRecord> {
    try {
      // A job about one run completes with that run's record.
      return (await job.waitUntilFinished(events)) as RunRecord;
    } catch (err) {
      // A job done (and removed, as completed jobs are) before the wait began to look: what it
      // did is in the run's record.
      if (err instanceof Error && err.message.startsWith('Missing key for job'))
        return this.status(runId);
      throw fromJobError(err, `run ${runId}`);
    }
  }
}

/** The records a run job completed with: one, or a group's (see {@link RunJobResult}). */
function parseRecords(value: unknown): RunRecord[] {
  let parsed: unknown;
  try {
    parsed = typeof value === 'string' ? JSON.parse(value) : value;
  } catch {
    return [];
  }
  const isRecord = (r: unknown): r is RunRecord =>
    r !== null && typeof r === 'object' && typeof (r as RunRecord).runId === 'string';
  return (Array.isArray(parsed) ? parsed : [parsed]).filter(isRecord);
}
