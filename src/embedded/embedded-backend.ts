/**
 * Runs in this process (no server): an engine over the project, waiting and ended runs kept in
 * `.dirigent/runs/` (`FileRunStore`), so another process can read, signal or cancel them.
 */
import { randomUUID } from 'node:crypto';
import type { DirectiveLoader, LoadedDirective } from '../engine/directive-loader.js';
import { Engine } from '../engine/engine.js';
import { FileRunStore } from '../engine/file-run-store.js';
import type { StoredRun } from '../engine/run-store.js';
import { toStoredRun } from '../engine/to-stored-run.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { ItemDispatcher } from '../tools/item-dispatcher.js';
import { EmbeddedRunChanges } from './embedded-run-changes.js';
import { EmbeddedFeeds } from './embedded-feeds.js';
import { FilePauseBook } from './file-pause-book.js';
import { KeyGate } from './key-gate.js';
import type { ActiveRun } from '../engine/active-run.js';
import { runConcurrencyOf } from '../engine/run-concurrency.js';
import { queuedRecord, type RunRecord } from '../engine/run-record.js';
import { ErrorCode } from '../errors/error-codes.js';
import { countRecords, type CountFilter, type RunCounts } from '../run-backend/run-counts.js';
import type { ChangeSource } from '../run-backend/run-changes.js';
import type { BackendStart, RunBackend } from '../run-backend/run-backend.js';
import { pollRecord } from '../run-backend/poll-record.js';
import { RunFeed, type FollowOptions } from '../run-backend/run-feed.js';
import type { CancelOptions } from '../engine/cancel-options.js';
import { pageOf, type RunFilter, type RunPage } from '../run-backend/run-filter.js';
import { runNotFound } from '../errors/run-errors.js';

/** See the module comment. */
export class EmbeddedBackend implements RunBackend {
  readonly mode = 'embedded';
  readonly engine: Engine;
  private readonly store: FileRunStore;
  private readonly feeds: EmbeddedFeeds;
  /** The slots of run concurrency keys, and the starts waiting for one. */
  private readonly gate = new KeyGate();
  /** Runs waiting for a slot of their concurrency key: their record, and when they start. */
  private readonly queued = new Map<string, { record: RunRecord; started: Promise<ActiveRun> }>();
  readonly pauses: FilePauseBook;

  constructor(
    private readonly projectDir: string,
    loader: DirectiveLoader,
    telemetry: Telemetry | undefined,
  ) {
    this.store = new FileRunStore(projectDir);
    this.pauses = new FilePauseBook(projectDir);
    this.feeds = new EmbeddedFeeds(
      (id) => this.engine.activeRun(id)?.lineage.parentRunId ?? undefined,
    );
    this.engine = new Engine({
      projectDir,
      loader,
      dispatcher: new ItemDispatcher(loader.items, {
        limits: loader.policy.limits,
        ...(telemetry && { telemetry }),
      }),
      store: this.store,
      pauses: this.pauses,
      observer: this.feeds.observer,
      ...(telemetry && { telemetry }),
    });
  }

  start(
    loaded: LoadedDirective,
    inputs: Record<string, unknown>,
    options: BackendStart,
  ): Promise<RunRecord> {
    const runId = options.runId ?? randomUUID();
    const begin = () =>
      this.engine.start(loaded, inputs, {
        runId,
        trigger: options.trigger,
        ...(options.tags && { tags: options.tags }),
        ...(options.from && { from: options.from }),
      });
    const c = runConcurrencyOf(loaded.compiled.directive, inputs);
    if (c === undefined) return Promise.resolve(structuredClone(begin().record));
    // A run with a concurrency key holds its key's slot until it ends (see run-concurrency.ts).
    const key = `${loaded.itemId}\0${c.key}`;
    const held = (run: ActiveRun) => {
      void run.finished().finally(() => this.gate.leave(key));
      return run;
    };
    let started!: (run: ActiveRun) => void;
    const queued = {
      record: queuedRecord(runId, loaded.itemId, Date.now()),
      started: new Promise<ActiveRun>((resolve) => (started = resolve)),
    };
    const waitForSlot = () => {
      this.queued.delete(runId);
      started(held(begin()));
    };
    if (this.gate.enter(key, c.limit, runId, waitForSlot))
      return Promise.resolve(structuredClone(held(begin()).record));
    this.queued.set(runId, queued);
    return Promise.resolve(structuredClone(queued.record));
  }

  async get(runId: string): Promise<RunRecord | undefined> {
    return (
      this.engine.activeRun(runId)?.record ??
      this.queued.get(runId)?.record ??
      (await this.store.load(runId))?.record
    );
  }

  async list(filter: RunFilter): Promise<RunPage> {
    return pageOf(await this.records(), filter);
  }

  async stored(runId: string): Promise<StoredRun | undefined> {
    const live = this.engine.activeRun(runId);
    return live !== undefined
      ? structuredClone(toStoredRun(live, this.projectDir))
      : this.store.load(runId);
  }

  async counts(filter: CountFilter): Promise<RunCounts> {
    return countRecords(await this.records(), filter);
  }

  /** Every run: those kept in `.dirigent/runs/`, and those live here as they stand now. */
  private async records(): Promise<Iterable<RunRecord>> {
    const byId = new Map((await this.store.list()).map((r) => [r.runId, r]));
    for (const r of this.engine.activeRuns()) byId.set(r.runId, r.record);
    for (const [runId, q] of this.queued) byId.set(runId, q.record);
    return byId.values();
  }

  changes(): ChangeSource {
    return new EmbeddedRunChanges(this.engine, this.store);
  }

  async wait(runId: string, timeoutMs?: number): Promise<RunRecord> {
    const queued = this.queued.get(runId);
    if (queued !== undefined) {
      if (timeoutMs === undefined) return (await queued.started).settled();
      const until = Date.now() + timeoutMs;
      const late = new Promise<undefined>((r) => setTimeout(() => r(undefined), timeoutMs).unref());
      if ((await Promise.race([queued.started, late])) === undefined) return queued.record;
      return this.wait(runId, Math.max(0, until - Date.now()));
    }
    const live = this.engine.activeRun(runId);
    if (live === undefined) return this.found(runId);
    if (timeoutMs === undefined) return live.settled();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<RunRecord>((resolve) => {
      timer = setTimeout(() => resolve(live.record), timeoutMs);
    });
    try {
      return await Promise.race([live.settled(), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  cancel(runId: string, reason: string, options?: CancelOptions): Promise<RunRecord> {
    const queued = this.queued.get(runId);
    if (queued !== undefined && this.gate.drop(runId)) {
      // It never started: it ends here, as it stood.
      this.queued.delete(runId);
      const at = Date.now();
      const error = { code: ErrorCode.CANCELLED, message: reason, step: null };
      return Promise.resolve({ ...queued.record, status: 'cancelled', endedAt: at, error });
    }
    return this.engine.cancelRun(runId, reason, options);
  }

  signal(runId: string, name: string, payload: unknown): Promise<RunRecord> {
    return this.engine.signal(runId, name, payload);
  }

  async resumePaused(): Promise<number> {
    const live = this.engine.releaseHolds();
    const settled = live.map((run) => run.settled());
    // Paused runs at rest in the store (their process ended): resumed here, oldest first.
    const resting = (await this.store.list())
      .filter((r) => r.status === 'paused' && this.engine.activeRun(r.runId) === undefined)
      .filter((r) => !this.pauses.isPaused(r.directive))
      .sort((a, b) => a.startedAt - b.startedAt);
    for (const r of resting) settled.push((await this.engine.resume(r.runId)).settled());
    await Promise.allSettled(settled);
    return live.length + resting.length;
  }

  async redrive(runId: string, by: string): Promise<{ settled: Promise<RunRecord> }> {
    const run = await this.engine.redrive(runId, by);
    return { settled: run.settled().then((record) => structuredClone(record)) };
  }

  async follow(runId: string, options: FollowOptions = {}): Promise<RunFeed> {
    const feed = new RunFeed(runId);
    if (options.after !== undefined && this.feeds.attach(runId, feed, options.after)) return feed;
    const live = this.engine.activeRun(runId);
    // A live run's record and its feed's position are taken in one turn: nothing falls between.
    const record = live !== undefined ? structuredClone(live.record) : await this.found(runId);
    const position = this.feeds.position(runId);
    feed.push({ type: 'run.state', id: position, runId, at: Date.now(), record });
    if (feed.isDone) return feed;
    this.feeds.attach(runId, feed, position, true);
    // A run resting in the store may be resumed by another process: its record tells how it goes.
    if (live === undefined)
      pollRecord(feed, () => this.get(runId), record, {
        skip: () => this.engine.activeRun(runId) !== undefined,
      });
    return feed;
  }

  ready(): Promise<{ ok: boolean; detail: string }> {
    return Promise.resolve({ ok: true, detail: 'embedded: runs in this process' });
  }

  /**
   * Gives the runs under way `graceMs` to end or wait, then cancels the rest, so that each is
   * recorded (`cancelled`) instead of vanishing with the process; lets go of waiting runs (they
   * live on in `.dirigent/runs/`), waits for stopped work to stop, closes the tools' warm
   * processes.
   */
  async close(graceMs = 0): Promise<void> {
    const running = [...this.engine.activeRuns()].filter(
      (r) => r.lineage.parentRunId === null && r.record.status === 'running',
    );
    await Promise.all(
      running.map(async (run) => {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, graceMs);
        });
        await Promise.race([run.settled(), late]);
        clearTimeout(timer);
        if (run.record.status === 'running')
          await this.engine.cancelRun(run.runId, 'Cancelled: the process shut down.');
      }),
    );
    for (const run of this.engine.activeRuns()) this.feeds.rested(run.runId);
    this.engine.release();
    await this.engine.drain();
    await this.engine.dispatcher.close?.();
    this.engine.loader.items.close();
  }

  private async found(runId: string): Promise<RunRecord> {
    const record = await this.get(runId);
    if (record !== undefined) return record;
    throw runNotFound(runId, 'embedded');
  }
}
