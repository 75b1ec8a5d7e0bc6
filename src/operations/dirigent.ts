/**
 * The operations every face calls (DESIGN.md, "One set of operations, several faces"): start,
 * run, read, list, wait for, cancel and signal runs, embedded or on a Redis deployment alike.
 * The CLI, the HTTP API, the queue trigger and a library user call these; a face only translates
 * arguments in and results or `DirigentError`s out.
 *
 * ```ts
 * const dirigent = await Dirigent.open({ project: '.', redis: process.env.REDIS_URL });
 * const record = await dirigent.run({ directive: 'hello', inputs: { name: 'Ada' } });
 * await dirigent.close();
 * ```
 */
import { resolve } from 'node:path';
import { DirectiveLoader, type LoadedDirective } from '../engine/directive-loader.js';
import type { CancelOptions } from '../engine/cancel-options.js';
import type { EngineObserver } from '../engine/engine-options.js';
import { checkRecordAnswer } from '../engine/check-answer.js';
import { hasEnded, type RunRecord } from '../engine/run-record.js';
import { validateInputs } from '../engine/validate-inputs.js';
import { checkSignalPayload } from '../policy/check-json-size.js';
import { Telemetry } from '../telemetry/telemetry.js';
import { checkRunId } from './check-run-id.js';
import { claimRun } from './claim-run.js';
import { DirectiveCache } from './directive-cache.js';
import { listDirectives, type DirectiveInfo } from './directive-catalog.js';
import type { DirigentOptions } from './dirigent-options.js';
import { emitEvent, type Emitted } from './emit-event.js';
import { EmbeddedBackend } from '../embedded/embedded-backend.js';
import { FileIdempotency } from '../embedded/file-idempotency.js';
import { FileBulkLedger } from '../embedded/file-bulk-ledger.js';
import { checkPauseTarget, type PauseState, type PauseTarget } from './pause.js';
import {
  runBulkAction,
  type BulkLedger,
  type BulkReport,
  type BulkRequest,
} from './bulk-action.js';
import { checkTags } from '../engine/run-tags.js';
import { checkPriority } from '../engine/run-priority.js';
import {
  checkReusePolicy,
  DEFAULT_IDEMPOTENCY_WINDOW_MS,
  reuseWithoutKey,
  type IdempotencyStore,
} from './idempotency.js';
import { ItemOperations } from './item-operations.js';
import { RunQueries } from './run-queries.js';
import type { RunBackend } from '../run-backend/run-backend.js';
import { FEED_START, type FollowOptions, type RunFeed } from '../run-backend/run-feed.js';
import { RunHandle } from './run-handle.js';
import { RunProgress } from './run-progress.js';
import { checkRunFilter, type RunFilter, type RunPage } from '../run-backend/run-filter.js';
import type { BatchOptions, BatchReport, BatchStatus } from '../batches/batch.js';
import type { Schedule, ScheduleStore } from './schedule.js';
import { declaredSchedules, scheduleOf, type ScheduleRequest } from './schedule-of.js';
import type { RerunRequest, StartedRun, StartRequest } from './start-request.js';
import { RERUN_OF_TAG, rerunSeed, type RerunSeed } from '../engine/rerun.js';
import { storedDirective } from '../engine/restored-run.js';
import { isDirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { validateDirective, type Validation } from './validate-directive.js';
import { runEnded, runNotEnded, runNotFound, runNotRedrivable } from '../errors/run-errors.js';
import { redriveRefusal } from '../engine/redrive.js';
import { needsRedis } from '../errors/deployment-errors.js';

/** See the module comment. */
export class Dirigent {
  private constructor(
    readonly projectDir: string,
    readonly loader: DirectiveLoader,
    private readonly backend: RunBackend,
    private readonly claims: IdempotencyStore,
    private readonly windowMs: number,
    /** What bulk actions did to each run (see `bulk-action.ts`). */
    private readonly ledger: BulkLedger,
    /** A Redis deployment's schedules (none embedded). */
    private readonly book?: ScheduleStore,
  ) {
    this.directiveCache = new DirectiveCache(loader);
  }

  private readonly directiveCache: DirectiveCache;
  /** Observers told how runs go (starts and signals given an `observer`). */
  private readonly progress = new RunProgress();

  /**
   * Opens a project, embedded or on Redis. Rejects with `REDIS_UNAVAILABLE` when the Redis URL
   * does not answer, and with `INVALID_CONFIG` for a malformed project configuration.
   */
  static async open(options: DirigentOptions = {}): Promise<Dirigent> {
    const projectDir = resolve(options.project ?? process.cwd());
    const loader = new DirectiveLoader(projectDir);
    const telemetry = Telemetry.of(options.telemetry);
    const windowMs = options.idempotencyWindowMs ?? DEFAULT_IDEMPOTENCY_WINDOW_MS;
    if (options.redis === undefined) {
      const backend = new EmbeddedBackend(projectDir, loader, telemetry);
      const claims = new FileIdempotency(projectDir);
      const ledger = new FileBulkLedger(projectDir);
      return new Dirigent(projectDir, loader, backend, claims, windowMs, ledger);
    }
    // The Redis side is loaded only when used: an embedded run never pays for BullMQ.
    const { openRedis } = await import('../redis/client/open-redis.js');
    const redis = await openRedis(
      options.redis,
      { prefix: options.prefix, shards: options.shards },
      loader,
      telemetry,
    );
    const { backend, claims, ledger, book } = redis;
    return new Dirigent(projectDir, loader, backend, claims, windowMs, ledger, book);
  }

  private itemOperations: ItemOperations | undefined;

  /** The item interface: search, load, execute and sign directives, tools and knowledge. */
  get items(): ItemOperations {
    this.itemOperations ??= new ItemOperations(this);
    return this.itemOperations;
  }

  /** `embedded` or `redis`. */
  get mode(): 'embedded' | 'redis' {
    return this.backend.mode;
  }

  /**
   * The directive a request names, read, verified and compiled: `UNKNOWN_DIRECTIVE`,
   * `INVALID_ITEM_ID`, signature errors and the directive's own located errors otherwise.
   */
  load(directive: string, allowFile = false): Promise<LoadedDirective> {
    return this.directiveCache.load(directive, allowFile);
  }

  /**
   * Starts a run and resolves with a handle on it once it is under way (embedded) or queued
   * (Redis). Nothing starts when the directive or the inputs are invalid (`INVALID_INPUTS` lists
   * every problem). With an idempotency key, the key's run is returned if it has one.
   */
  async start(request: StartRequest): Promise<RunHandle> {
    const started = await this.startRun(request);
    return new RunHandle(this, started.runId, started.created, started.record);
  }

  private async startRun(
    request: StartRequest,
    from?: { loaded: LoadedDirective; seed: RerunSeed; runId?: string },
  ): Promise<StartedRun> {
    const loaded = from?.loaded ?? (await this.load(request.directive, request.allowFile));
    const inputs = validateInputs(
      loaded.compiled.directive,
      request.inputs ?? {},
      this.loader.policy.limits,
    );
    const tags = request.tags === undefined ? undefined : checkTags(request.tags);
    const priority =
      request.priority !== undefined
        ? checkPriority(request.priority)
        : loaded.compiled.directive.runSettings.priority;
    // A run with no key gets its id where it starts (a group of starts names its runs).
    let runId = from?.runId;
    if (request.reuse !== undefined) {
      checkReusePolicy(request.reuse);
      if (request.idempotencyKey === undefined) throw reuseWithoutKey();
    }
    if (request.idempotencyKey !== undefined) {
      const claimed = await claimRun(this.claims, this.backend, {
        key: request.idempotencyKey,
        directive: loaded.itemId,
        inputs,
        windowMs: this.windowMs,
        ...(request.reuse !== undefined && { reuse: request.reuse }),
      });
      if ('record' in claimed) return claimed;
      runId = claimed.runId;
    }
    const record = await this.backend.start(loaded, inputs, {
      ...(runId !== undefined && { runId }),
      trigger: request.trigger ?? 'library',
      ...(tags && { tags }),
      ...(priority !== undefined && { priority }),
      ...(from && { from: from.seed }),
    });
    // Its feed from its first event: nothing is missed however soon the run gets going.
    if (request.observer !== undefined)
      this.progress.tell(
        await this.backend.follow(record.runId, { after: FEED_START }),
        request.observer,
      );
    return { runId: record.runId, created: true, record };
  }

  /**
   * Reruns a run from one of its steps (see `engine/rerun.ts`): a new run of its directive (as the
   * project has it now) that starts at `request.from` (default: the step it failed at) with its
   * inputs, over which `request.inputs` are laid and the whole validated, and with the state and
   * step results that existed before that step: the steps before it are not run again. The new
   * run's record says `rerunOf`; the old run finds it by the tag `dirigent.rerun-of`. Resolves
   * with a handle on the new run once it is under way (or queued). `RUN_NOT_ENDED` while the run
   * goes on; `INVALID_REQUEST` for a step it cannot start at; `INVALID_INPUTS` for edited inputs
   * that do not fit.
   */
  async rerun(runId: string, request: RerunRequest = {}): Promise<RunHandle> {
    checkRunId(runId);
    if (request.runId !== undefined) {
      checkRunId(request.runId);
      const made = await this.backend.get(request.runId);
      if (made !== undefined) return new RunHandle(this, made.runId, false, made);
    }
    const stored = await this.backend.stored(runId);
    const status = stored?.record.status ?? (await this.get(runId)).status;
    if (stored === undefined || !hasEnded(status)) throw runNotEnded(runId, status, 'rerun');
    const loaded = await this.load(stored.record.directive).catch((err: unknown) => {
      // A run of a file outside the project's directives: its own text.
      if (isDirigentError(err, ErrorCode.UNKNOWN_DIRECTIVE))
        return storedDirective(this.loader, stored);
      throw err;
    });
    const seed = rerunSeed(stored, loaded.compiled.directive, loaded.compiled.nodes, request.from);
    const before = (stored.snapshot as { context?: { inputs?: Record<string, unknown> } } | null)
      ?.context?.inputs;
    const started = await this.startRun(
      {
        directive: stored.record.directive,
        inputs: { ...before, ...request.inputs },
        trigger: request.trigger ?? 'library',
        tags: { [RERUN_OF_TAG]: runId },
        ...(request.priority !== undefined && { priority: request.priority }),
        ...(request.observer && { observer: request.observer }),
      },
      { loaded, seed, ...(request.runId !== undefined && { runId: request.runId }) },
    );
    return new RunHandle(this, started.runId, true, started.record);
  }

  /**
   * Cancels, redrives or reruns every run `request.filter` matches (see `bulk-action.ts`), or,
   * with `dryRun`, counts them and shows a sample. Reads the runs a page at a time, acts on a few
   * at once, tells `onProgress` after each page, and keeps under the action's id what it did to
   * each run: the same action started again after an interruption acts on each run once.
   * Embedded, the runs it redrives or reruns go on in this process, and it resolves once they end
   * or wait; on Redis, once they are queued.
   */
  async bulk(request: BulkRequest): Promise<BulkReport> {
    const goingOn: Promise<unknown>[] = [];
    const embedded = this.mode === 'embedded';
    const report = await runBulkAction(
      {
        list: (filter) => this.list(filter),
        get: (runId) => this.get(runId),
        cancel: (runId, reason) => this.cancel(runId, reason),
        redrive: async (runId, by) => {
          const { settled } = await this.backend.redrive(runId, by);
          if (embedded) goingOn.push(settled);
          else settled.catch(() => undefined); // its outcome is the run's
        },
        rerun: async (runId, newRunId) => {
          const run = await this.rerun(runId, { runId: newRunId });
          if (embedded) goingOn.push(run.wait());
        },
      },
      this.ledger,
      request,
    );
    await Promise.allSettled(goingOn);
    return report;
  }

  /**
   * Pauses a directive (`{ directive }`, an item id of the project) or the whole deployment
   * (`{ all: true }`), and resolves with the pauses in force (see `pause.ts`): its runs hold their
   * next steps, new ones included, until it is resumed. `UNKNOWN_DIRECTIVE` for a directive the
   * project does not have.
   */
  async pause(target: PauseTarget): Promise<PauseState> {
    checkPauseTarget(target);
    if ('directive' in target) await this.load(target.directive);
    await this.backend.pauses.pause(target);
    return this.backend.pauses.state();
  }

  /**
   * Lifts the pause of a directive, or (`{ all: true }`) every pause, then begins the held steps
   * of the paused runs no pause holds any more, in the order they started. Resolves with the
   * pauses still in force and how many runs it resumed (embedded, once they end or wait again;
   * on Redis, once they are queued).
   */
  async resume(target: PauseTarget): Promise<{ paused: PauseState; resumed: number }> {
    checkPauseTarget(target);
    await this.backend.pauses.resume(target);
    const resumed = await this.backend.resumePaused();
    return { paused: await this.backend.pauses.state(), resumed };
  }

  /** The pauses in force: the whole deployment's, and the directives paused. */
  pauses(): Promise<PauseState> {
    return this.backend.pauses.state();
  }

  /**
   * Checks a start without starting anything: the directive loads, verifies and compiles, and
   * `inputs` are valid for it. Resolves with the inputs as the run would get them (defaults
   * filled, types coerced); throws what {@link start} would.
   */
  async check(
    directive: string,
    inputs: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    const loaded = await this.load(directive);
    return validateInputs(loaded.compiled.directive, inputs, this.loader.policy.limits);
  }

  /** Starts a run and resolves with its record once it ends or waits (see {@link start}). */
  async run(request: StartRequest): Promise<RunRecord> {
    const { runId } = await this.startRun(request);
    return this.wait(runId);
  }

  /** The run's record; `RUN_NOT_FOUND` when there is none (never started, or expired). */
  async get(runId: string): Promise<RunRecord> {
    checkRunId(runId);
    const record = await this.backend.get(runId);
    if (record !== undefined) return record;
    throw runNotFound(runId, this.backend.mode);
  }

  /** Runs, newest first, a page at a time; `INVALID_REQUEST` for a status no run can have. */
  async list(filter: RunFilter = {}): Promise<RunPage> {
    checkRunFilter(filter);
    return this.backend.list(filter);
  }

  private runQueries: RunQueries | undefined;

  /** What a console reads: a run's whole view, counts by status, runs as they change. */
  get runs(): RunQueries {
    return (this.runQueries ??= new RunQueries(this, this.backend));
  }

  /**
   * The run's record once it ends or waits, or as it stands after `timeoutMs`. An observer the
   * run was started or signalled with has been told every step by then.
   */
  async wait(runId: string, options: { timeoutMs?: number } = {}): Promise<RunRecord> {
    checkRunId(runId);
    const record = await this.backend.wait(runId, options.timeoutMs);
    if (record.status !== 'running' && record.status !== 'queued')
      await this.progress.caughtUp(runId);
    return record;
  }

  /**
   * Cancels a run (stopping its running work) and resolves with its record once it has ended:
   * after the compensations of its completed steps, unless `options.compensate` is false.
   * `RUN_ENDED` (with the run's status) when it has already completed, failed or been cancelled;
   * `RUN_NOT_FOUND` when there is no such run.
   */
  async cancel(
    runId: string,
    reason = 'Cancelled.',
    options: CancelOptions = {},
  ): Promise<RunRecord> {
    const record = await this.get(runId);
    if (hasEnded(record.status)) {
      throw runEnded(runId, record.status);
    }
    return this.backend.cancel(runId, reason, options);
  }

  /**
   * Sends signal `name` with `payload` (the waiting step's result) to a waiting run; resolves once
   * the run ends or waits again. `UNKNOWN_SIGNAL` when nothing waits for it, `RUN_NOT_WAITING`
   * when the run no longer waits, `INPUT_TOO_LARGE` for an oversized payload, `INVALID_PAYLOAD`
   * (every problem listed; the run waits on as it was) for a payload that does not match the
   * waiting step's `<answer>`s.
   */
  async signal(
    runId: string,
    name: string,
    payload: unknown,
    options: { observer?: EngineObserver } = {},
  ): Promise<RunRecord> {
    checkRunId(runId);
    checkSignalPayload(name, payload, this.loader.policy.limits);
    // Checked before anything is sent (on Redis, before a signal job); whoever delivers it checks
    // again against the run's directive.
    const waited = await this.backend.get(runId);
    if (waited !== undefined) checkRecordAnswer(waited, name, payload);
    const { observer } = options;
    if (observer === undefined) return this.backend.signal(runId, name, payload);
    // Followed from the state it waits in: what the signal sets going is told, and only that.
    const feed = await this.backend.follow(runId);
    this.progress.tell(feed, observer, true);
    try {
      const record = await this.backend.signal(runId, name, payload);
      await this.progress.caughtUp(runId);
      return record;
    } finally {
      feed.close();
    }
  }

  /**
   * Redrives a run that failed or was cancelled (see `engine/redrive.ts`): it goes on under its id
   * from the step that failed (or the steps under way when it stopped); the steps that completed
   * keep their results and do not run again, and its record notes the redrive (`redrives`, with
   * `by`). Resolves once the run ends or waits again. `RUN_NOT_REDRIVABLE` (its status in the
   * details) for a run that completed, waits or runs, or whose compensations ran.
   */
  async redrive(
    runId: string,
    options: { by?: string; observer?: EngineObserver } = {},
  ): Promise<RunRecord> {
    const record = await this.get(runId);
    const refusal = redriveRefusal(record, true);
    if (refusal !== undefined) throw runNotRedrivable(runId, record.status, refusal);
    const by = options.by ?? 'library';
    const { observer } = options;
    if (observer === undefined) return (await this.backend.redrive(runId, by)).settled;
    // Followed from where the feed stands: what the redrive sets going is told, and only that.
    const position = await this.feedPosition(runId);
    const { settled } = await this.backend.redrive(runId, by);
    this.progress.tell(await this.backend.follow(runId, { after: position }), observer);
    const outcome = await settled;
    await this.progress.caughtUp(runId);
    return outcome;
  }

  /** The id of the last event in the run's feed: where a follower goes on from. */
  private async feedPosition(runId: string): Promise<string> {
    const feed = await this.backend.follow(runId);
    try {
      const first = await feed.next();
      return first.done === true ? FEED_START : first.value.id;
    } finally {
      feed.close();
    }
  }

  /**
   * The run's event feed (see `run-backend/run-feed.ts`): `run.state` with its record as it
   * stands, then every event after it, in order, until the run ends; with `after` (an event's
   * id), the events after it instead. `RUN_NOT_FOUND` when there is no such run.
   *
   * ```ts
   * for await (const event of await dirigent.watch(runId)) console.log(event.type);
   * ```
   */
  watch(runId: string, options: FollowOptions = {}): Promise<RunFeed> {
    checkRunId(runId);
    return this.backend.follow(runId, options);
  }

  /** The directives of the project's spaces, with their inputs, and why any cannot run. */
  directives(): Promise<DirectiveInfo[]> {
    return listDirectives(this.loader);
  }

  /**
   * Checks a directive without running it: one of the project's by item id, or a text (read as
   * the content of a directive file, under the project's policy). Never throws for the
   * directive's own problems: they are the answer.
   */
  validate(request: { directive: string } | { source: string }): Promise<Validation> {
    return validateDirective(this, request);
  }

  /**
   * Sends event `event` (payload: a JSON object, the runs' input `event`): every directive of the
   * project that runs on it (`<on event>`) is started once per event id (default: a new one),
   * however often the same event is sent. Resolves with each subscriber's run, or why it could
   * not start.
   */
  emit(event: string, payload: unknown, options: { id?: string } = {}): Promise<Emitted> {
    return emitEvent(this, event, payload, options);
  }

  /** The deployment's schedules (`NEEDS_REDIS` embedded). */
  schedules(): Promise<Schedule[]> {
    return this.scheduleBook().list();
  }

  /**
   * Adds (or, with the same id, replaces) a schedule: a run of `directive` with `inputs` per tick
   * of `cron` in `timezone`. The directive, the inputs and the cron expression are checked first.
   */
  async addSchedule(request: ScheduleRequest): Promise<Schedule> {
    const book = this.scheduleBook();
    const loaded = await this.load(request.directive);
    const schedule = scheduleOf(loaded, request, this.loader.policy.limits);
    await book.put(schedule);
    return schedule;
  }

  /** Removes a schedule (`UNKNOWN_SCHEDULE` when there is none with that id). */
  removeSchedule(id: string): Promise<void> {
    return this.scheduleBook().remove(id);
  }

  /**
   * Registers the schedules the project's directives declare (`<schedule>`), as ids
   * `directive:<item id>#<name>`, and removes declared ones no directive declares any more.
   * Workers do this when they start.
   */
  async syncSchedules(): Promise<{ kept: number; removed: string[] }> {
    const book = this.scheduleBook();
    return book.sync(await declaredSchedules(this));
  }

  private scheduleBook(): ScheduleStore {
    if (this.book !== undefined) return this.book;
    throw needsRedis('Scheduling runs', 'the workers of a deployment fire schedules');
  }

  /**
   * Runs (or, the same batch again, resumes) a batch: one run per input of a JSONL or CSV file or
   * stream, results appended to its results file (see `batches/batch.ts`).
   */
  async batch(options: BatchOptions): Promise<BatchReport> {
    return (await import('../batches/batch.js')).runBatchFile(this, options);
  }

  /** Resumes a batch by id, as it was started. */
  async resumeBatch(
    batchId: string,
    options: Parameters<typeof import('../batches/batch.js').resumeBatch>[2] = {},
  ): Promise<BatchReport> {
    return (await import('../batches/batch.js')).resumeBatch(this, batchId, options);
  }

  /** How a batch stands, and its results so far (`results` names the file). */
  async batchStatus(batchId: string): Promise<BatchStatus> {
    return (await import('../batches/batch.js')).batchStatus(this.projectDir, batchId);
  }

  /** Whether runs can be taken up now: always embedded; on Redis, when a worker listens. */
  ready(): Promise<{ ok: boolean; detail: string }> {
    return this.backend.ready();
  }

  /**
   * Writes the ended runs `request.filter` matches to `request.out` as JSON lines (record, inputs,
   * outputs, steps), a page at a time; run again with the same file after an interruption, it
   * appends only the runs not yet written (see `export-runs.ts`).
   */
  async exportRuns(
    request: import('./export-runs.js').ExportRequest,
  ): Promise<import('./export-runs.js').ExportReport> {
    return (await import('./export-runs.js')).exportRuns(
      { list: (filter) => this.list(filter), stored: (runId) => this.backend.stored(runId) },
      request,
    );
  }

  /**
   * Closes what this object opened. Embedded, runs under way get `graceMs` (default 0) to end or
   * wait, and the rest are cancelled, so each is recorded; runs that wait live on in
   * `.dirigent/`, and work that was stopped has stopped before this resolves. On Redis, runs go on
   * on the workers.
   */
  async close(options: { graceMs?: number } = {}): Promise<void> {
    this.backend.pauses.close();
    await this.book?.close();
    await this.itemOperations?.close();
    await this.backend.close(options.graceMs);
  }
}
