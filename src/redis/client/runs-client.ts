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

/**
 * How often a wait looks at the store, besides hearing of the run jobs that end (a safety net for
 * an end not heard: events trimmed away while a connection was down, say).
 */
const WAIT_POLL_MS = 1000;

/**
 * How long a run this client started may be missing from the store before a wait looks for the
 * job holding its start (to report one that failed or vanished); before that it is known queued.
 */
const QUEUED_TRUST_MS = 5000;

/** Runs this client started, remembered for their waits (see {@link QUEUED_TRUST_MS}): at most. */
const STARTED_KEPT = 20_000;

/** Runs whose status one look reads, at most, in one round trip. */
const LOOK_PAGE = 1000;

/** Whoever waits for a run to end or wait. */
interface Waiter {
  settled: (record: RunRecord) => void;
  failed: (error: DirigentError) => void;
}

/** The waiters of one run, and since when the run has been waited for. */
interface Waiting {
  waiters: Set<Waiter>;
  since: number;
}

/** Starts, signals, cancels and reads runs on a Redis deployment. */
export class RunsClient {
  readonly store: RedisRunStore;
  private readonly queue: Queue<RunJobData, RunJobResult>;
  private events: Promise<QueueEvents> | undefined;
  /** BullMQ does not close a connection it is given: the client closes its own. */
  private eventsConnection: RedisClient | undefined;
  private readonly telemetry: Telemetry | undefined;
  /** Runs waited for, by id. */
  private readonly waiting = new Map<string, Waiting>();
  /** Runs started here, oldest first (see {@link QUEUED_TRUST_MS}). */
  private readonly startedHere = new Set<string>();
  /** Runs whose first look is gathered for the next turn of the event loop. */
  private looks = new Set<string>();
  private lookSoon: NodeJS.Immediate | undefined;
  /** The one timer that looks again at every run waited for long enough. */
  private sweeping: NodeJS.Timeout | undefined;
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
    if (concurrency === undefined)
      return this.startedHereAs(await this.sender.start(source, inputs, send));
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
    return this.startedHereAs(runId);
  }

  /** `runId`, remembered as a run this client started. */
  private startedHereAs(runId: string): string {
    this.startedHere.add(runId);
    if (this.startedHere.size > STARTED_KEPT)
      this.startedHere.delete(this.startedHere.values().next().value!);
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
    let waiting = this.waiting.get(runId);
    if (waiting === undefined)
      this.waiting.set(runId, (waiting = { waiters: new Set(), since: Date.now() }));
    waiting.waiters.add(waiter);
    // Listening first, then looking: an end that comes in between is heard, not missed.
    this.looks.add(runId);
    this.lookSoon ??= setImmediate(() => this.lookGathered());
    this.sweeping ??= setInterval(() => this.sweep(), WAIT_POLL_MS);
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
      clearTimeout(timer);
      waiting.waiters.delete(waiter);
      if (waiting.waiters.size === 0 && this.waiting.get(runId) === waiting) {
        this.waiting.delete(runId);
        this.startedHere.delete(runId);
      }
      if (this.waiting.size === 0) {
        clearInterval(this.sweeping);
        this.sweeping = undefined;
      }
    }
  }

  /** The first look of the waits begun in the last turn of the event loop, together. */
  private lookGathered(): void {
    this.lookSoon = undefined;
    const runIds = [...this.looks];
    this.looks = new Set();
    void this.look(runIds);
  }

  /** Looks again at the runs waited for at least {@link WAIT_POLL_MS}. */
  private sweep(): void {
    const due = Date.now() - WAIT_POLL_MS;
    const runIds: string[] = [];
    for (const [runId, { since }] of this.waiting) if (since <= due) runIds.push(runId);
    void this.look(runIds);
  }

  /**
   * Reads the status of waited runs, a page at a time, and tells the waiters of those that rest
   * (their whole record read then); a run not stored is looked for closely (its start job) unless
   * this client started it lately.
   */
  private async look(runIds: readonly string[]): Promise<void> {
    for (let at = 0; at < runIds.length; at += LOOK_PAGE) {
      const page = runIds.slice(at, at + LOOK_PAGE);
      const statuses = await this.store.statuses(page).catch((err: unknown) => {
        const error = DirigentError.from(err);
        for (const runId of page) this.tell(runId, (w) => w.failed(error));
        return [];
      });
      const now = Date.now();
      statuses.forEach((status, i) => {
        const runId = page[i]!;
        const waiting = this.waiting.get(runId);
        if (waiting === undefined || status === 'running' || status === 'queued') return;
        const queued =
          status === undefined &&
          this.startedHere.has(runId) &&
          now - waiting.since < QUEUED_TRUST_MS;
        if (!queued) void this.lookClosely(runId);
      });
    }
  }

  /** Reads a waited run's record (or its start job) and tells its waiters if it rests or failed. */
  private async lookClosely(runId: string): Promise<void> {
    try {
      const record = await this.status(runId);
      if (record.status !== 'running' && record.status !== 'queued')
        this.tell(runId, (w) => w.settled(record));
    } catch (err) {
      const error = DirigentError.from(err);
      this.tell(runId, (w) => w.failed(error));
    }
  }

  /** Tells every waiter of a run. */
  private tell(runId: string, what: (waiter: Waiter) => void): void {
    for (const w of this.waiting.get(runId)?.waiters ?? []) what(w);
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
    clearInterval(this.sweeping);
    clearImmediate(this.lookSoon);
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
        for (const record of records)
          if (record.status !== 'running') this.tell(record.runId, (w) => w.settled(record));
      };
      // Records are read only while some run is waited for.
      events.on('completed', ({ returnvalue }) => {
        if (this.waiting.size > 0) settle(parseRecords(returnvalue));
      });
      // The runs of a group of starts that rest before their group completes.
      events.on('progress', ({ data }) => {
        const runs = (data as { runs?: unknown } | null)?.runs;
        if (this.waiting.size > 0 && Array.isArray(runs)) settle(parseRecords(runs));
      });
      // A start job fails only when its run could not begin: its id is the run's. A group fails
      // as a whole only when none of its runs could be told apart (its job was malformed).
      events.on('failed', ({ jobId, failedReason }) => {
        for (const runId of this.waiting.keys()) {
          if (runId !== jobId && groupJobIdOf(runId) !== jobId) continue;
          const error = fromJobError(failedReason, `run ${runId}`);
          this.tell(runId, (w) => w.failed(error));
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
