/**
 * Runs in Redis, behind the {@link RunStore} port, for the distributed engine.
 *
 * The keys and fields it keeps are described in `run-hash.ts`.
 *
 * Every write is one Lua script (EVALSHA through ioredis `defineCommand`). The scripts also reach
 * keys they derive from the prefix (other runs' index entries), so on a Redis Cluster the prefix
 * is a shard's, which carries a hash tag (`shards/shard-layout.ts`): all of a store's keys share
 * one slot.
 */
import type { IndexOf } from './list-stored-runs.js';
import type { RedisClient } from '../redis-client.js';
import type { StepRecord } from '../../compiler/run-context.js';
import { RUN_STATUSES, type RunRecord, type RunStatus } from '../../engine/run-record.js';
import type { RunStore, StoredRun } from '../../engine/run-store.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { listStoredRuns, type RunListFilter } from './list-stored-runs.js';
import {
  DEFAULT_RETENTION_SECONDS,
  type RedisRunStoreOptions,
  type SaveRunOptions,
} from './redis-run-store-options.js';
import {
  runBusy,
  runConflict,
  RunClaims,
  runTakenOver,
  type RunClaim,
} from '../takeover/run-claims.js';
import {
  changes,
  fieldsOf,
  hashOf,
  metaOf,
  otherStepField,
  sameMeta,
  stepField,
  storedRunOf,
  type StoredHash,
  type VersionedRun,
} from './run-hash.js';
import { RunSaver } from './run-saver.js';
import { removeExpiredRunJobs } from './expired-run-jobs.js';
import { WrittenRuns } from './written-runs.js';
import { defineRunStoreCommands, type RunStoreCommands } from './run-store-scripts.js';
import { workersKey } from '../takeover/worker-lease.js';
import { FEED_START } from '../../run-backend/run-feed.js';
import { withRunId, type PendingEvents } from './pending-events.js';
import { FEED_FIELD } from './run-store-lua.js';
import { runNotFound } from '../../errors/run-errors.js';

export type { RunCursor, RunListFilter } from './list-stored-runs.js';
export type { VersionedRun } from './run-hash.js';
export {
  DEFAULT_RETENTION_SECONDS,
  type RedisRunStoreOptions,
  type SaveRunOptions,
} from './redis-run-store-options.js';

const ENDED: ReadonlySet<RunStatus> = new Set(['completed', 'failed', 'cancelled']);

/**
 * A {@link RunStore} in Redis: one hash per run, indexes by status and directive, optimistic
 * concurrency through versions, and expiry of ended runs. See the module comment for the layout.
 *
 * Writes send only what changed: the store remembers the fields it last wrote or read for each of
 * the {@link RedisRunStoreOptions.cachedRuns} most recent runs, and a save sends the fields whose
 * JSON differs (a transition writes the step that changed, not the whole run), on condition that
 * the hash still holds that write (its etag); if another process wrote the run meanwhile, the save
 * sends every field instead. Measured with one step added per save (500-byte results, local
 * Redis), against sending every field: 1.2–1.7 → 0.8–0.9 ms per save at 100 steps, 13–22 → 7–9 ms
 * at 3,000. The entries of the record's `steps` list, which only grows, are serialised and sent
 * once each (the store relies on an entry never changing once in the list); what still grows with
 * the run is serialising every step record (one per step name, not per entry) to compare it.
 * A directive's text is kept once for all its runs, not in each (see `run-hash.ts`).
 * Saves of one run from one store are applied in call order.
 *
 * Ended runs expire after the retention. Their index entries never pile up: every save that
 * changes a run's status also retires those of two expired runs, {@link prune} retires many at
 * once, and {@link list} skips (and removes) any entry whose hash is gone, so an expired run is
 * never listed.
 *
 * {@link load} rebuilds `steps` from the hash fields, whose order Redis does not keep: the step
 * records are the same, their key order may differ.
 */
export class RedisRunStore implements RunStore {
  readonly prefix: string;
  readonly retentionSeconds: number;
  readonly redis: RedisClient & RunStoreCommands;
  /** The lease name of the worker writing through this store, if it is fenced. */
  readonly owner: string | undefined;
  private readonly written: WrittenRuns;
  private readonly saver: RunSaver;
  /** The claims of a fenced store (see `run-claims.ts`). */
  private readonly claims: RunClaims | undefined;
  /** Feed events waiting for their run's next save, in a driver's store. */
  private events: PendingEvents | undefined;

  constructor(redis: RedisClient, options: RedisRunStoreOptions = {}) {
    this.prefix = options.prefix ?? 'dirigent';
    const retention = options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS;
    if (!(retention > 0))
      throw DirigentError.fatal(
        ErrorCode.INTERNAL,
        `retentionSeconds must be a positive number of seconds or Infinity, not ${retention}.`,
      );
    this.retentionSeconds = retention;
    this.written = new WrittenRuns(Math.max(0, options.cachedRuns ?? 1000));
    this.owner = options.owner;
    this.redis = defineRunStoreCommands(redis);
    this.claims =
      options.owner === undefined
        ? undefined
        : new RunClaims(this.redis, workersKey(this.prefix), options.owner);
    this.saver = new RunSaver(
      this,
      (id) => this.claims?.fence(id) ?? '',
      this.owner ?? '',
      options.replicaWait,
    );
  }

  /** The key of a run's hash. */
  runKey(runId: string): string {
    return `${this.prefix}:run:${runId}`;
  }

  /** The key of a run's body: its larger parts, as lines of JSON (see `run-hash.ts`). */
  bodyKey(runId: string): string {
    return `${this.runKey(runId)}:body`;
  }

  /**
   * The stored status of each run, in order, in one round trip: `undefined` for a run not stored
   * (not yet taken up by a worker, never started, or expired). Cheaper than {@link load} for a
   * wait that only needs to know whether the run rests.
   */
  async statuses(runIds: readonly string[]): Promise<(RunStatus | undefined)[]> {
    const pipeline = this.redis.pipeline();
    for (const id of runIds) pipeline.hget(this.runKey(id), 'status');
    const replies = (await pipeline.exec()) ?? [];
    return runIds.map((_, i) => {
      const [err, status] = replies[i] ?? [];
      if (err) throw err;
      return typeof status === 'string' ? (status as RunStatus) : undefined;
    });
  }

  /**
   * The key of a run's event feed, a list of its events (see `pending-events.ts`); also the
   * channel on which its writes are told.
   */
  feedKey(runId: string): string {
    return `${this.runKey(runId)}:feed`;
  }

  /**
   * Writes the events `events` holds for a run with each save of that run: the store of a driver,
   * whose engine tells them (see `pending-events.ts`).
   */
  writeFeedFrom(events: PendingEvents): void {
    this.events = events;
  }

  /**
   * The key of an index: the runs with a status, of a directive or with a tag. Every stored run is
   * in the index of its status, so these merged are all runs (see `list-stored-runs.ts`).
   */
  indexKey(by: IndexOf): string {
    if ('status' in by) return `${this.prefix}:runs:status:${by.status}`;
    if ('directive' in by) return `${this.prefix}:runs:directive:${by.directive}`;
    return `${this.prefix}:runs:tag:${by.tag[0]}=${by.tag[1]}`;
  }

  /**
   * Stores a run in one atomic script. With `expectVersion`, rejects with `RUN_CONFLICT`
   * (retryable: load again, reapply, save) if the stored version differs. The run is serialised
   * at once, so the caller may change it while the save is under way.
   */
  async save(run: StoredRun, options: SaveRunOptions = {}): Promise<void> {
    await this.saveVersioned(run, options);
  }

  /** {@link save}, resolving with the run's new version. */
  async saveVersioned(run: StoredRun, options: SaveRunOptions = {}): Promise<number> {
    const { record } = run;
    const { expectVersion } = options;
    if (record.status === 'queued' || !RUN_STATUSES.includes(record.status))
      throw DirigentError.fatal(ErrorCode.INTERNAL, `Unknown run status "${record.status}".`);
    const before = this.written.get(record.runId);
    const meta = metaOf(run);
    const fields = fieldsOf(run, meta, sameMeta(before?.meta, meta) ? before : undefined);
    // Taken with the state they tell of: the save writes both, or neither.
    const events = this.events?.take(record.runId);
    return this.written.serially(record.runId, async () => {
      const known = this.written.get(record.runId);
      let reply: [string, number, string?] | undefined;
      const etag = this.written.nextEtag();
      try {
        if (known !== undefined) {
          const { set, removed } = changes(known.fields, fields);
          const baseEtag = known.etag;
          reply = await this.saver.send('diff', run, expectVersion, {
            baseEtag,
            etag,
            removed,
            set,
            events,
          });
        }
        if (reply === undefined || reply[0] === 'stale')
          reply = await this.saver.send('full', run, expectVersion, {
            baseEtag: '',
            etag,
            removed: [],
            set: fields,
            events,
          });
      } catch (err) {
        this.written.forget(record.runId);
        // Not written: the next save of the run writes its events, in the order they came.
        if (events !== undefined) this.events?.restore(record.runId, events);
        throw err;
      }
      const version = this.checked(record.runId, reply, options);
      if (ENDED.has(record.status)) this.written.forget(record.runId);
      else this.written.remember(record.runId, { etag, fields, meta });
      return version;
    });
  }

  /**
   * Writes only these step records of an existing run (foreach items, branch results), leaving
   * its record, snapshot and indexes as they are; resolves with the new version. Rejects with
   * `RUN_NOT_FOUND` if the run is not stored, `RUN_CONFLICT` as {@link save} does.
   */
  async saveSteps(
    runId: string,
    steps: Record<string, StepRecord>,
    options: SaveRunOptions = {},
  ): Promise<number> {
    const set = new Map(Object.entries(steps).map(([name, step]) => stepField(name, step)));
    // A step's record in one form replaces it in the other (see `run-hash.ts`).
    const removed = [...set.keys()].map(otherStepField);
    return this.written.serially(runId, async () => {
      const known = this.written.get(runId);
      const etag = this.written.nextEtag();
      const target = { runId, status: 'running', directive: '', startedAt: 0 } as const;
      let reply: [string, number, string?];
      try {
        const baseEtag = known?.etag ?? '';
        const write = { baseEtag, etag, removed, set };
        reply = await this.saver.send('steps', { record: target }, options.expectVersion, write);
      } catch (err) {
        this.written.forget(runId);
        throw err;
      }
      if (reply[0] === 'missing') throw runNotFound(runId, 'redis');
      const version = this.checked(runId, reply, options);
      if (reply[0] === 'ok' && known !== undefined) {
        for (const field of removed) known.fields.delete(field);
        for (const [field, json] of set) known.fields.set(field, json);
        this.written.remember(runId, { etag, fields: known.fields });
      } else this.written.forget(runId);
      return version;
    });
  }

  /**
   * The run with its current version, or `undefined` if it is not stored (or has expired). A
   * fenced store claims the run as it reads it (see {@link claim}), and rejects with `RUN_BUSY`
   * (retryable) while another live worker holds it.
   */
  async load(runId: string): Promise<VersionedRun | undefined> {
    if (this.claims !== undefined) {
      const claim = await this.claim(runId);
      if (claim.status === 'busy') throw runBusy(runId, claim.owner);
      if (claim.status === 'missing') return undefined;
      this.claims.take(runId);
      return claim.run;
    }
    return (await this.read(runId))?.run;
  }

  /**
   * The run as {@link load} reads it (unclaimed), with the id of its feed's last event: the
   * record reflects every event up to that id, and none after it. Undefined when it is not stored.
   */
  async readFollowed(runId: string): Promise<{ run: VersionedRun; position: string } | undefined> {
    const read = await this.read(runId);
    return read && { run: read.run, position: read.position ?? FEED_START };
  }

  /**
   * The events of a run's feed after id `after` (at most `count`), with the id of its last event;
   * `gone` when the feed no longer holds the event after `after` (trimmed, or the run expired),
   * `ahead` when `after` is past its last event.
   */
  async readFeed(
    runId: string,
    after: number,
    count: number,
  ): Promise<{ outcome: 'ok' | 'gone' | 'ahead'; last: number; events: string[] }> {
    const [outcome, last, ...events] = await this.redis.dirigentReadFeed(
      this.runKey(runId),
      this.feedKey(runId),
      after,
      count,
    );
    return {
      outcome: outcome as 'ok' | 'gone' | 'ahead',
      last: Number(last),
      events: events.map((json) => withRunId(json, runId)),
    };
  }

  private async read(runId: string): Promise<(StoredHash & { position?: string }) | undefined> {
    const hash = hashOf(await this.redis.dirigentReadRun(this.runKey(runId)));
    const read = storedRunOf(hash);
    if (read === undefined) return undefined;
    this.rememberRead(runId, read);
    const position = hash[FEED_FIELD];
    return position === undefined ? read : { ...read, position };
  }

  /**
   * Claims a run for this store's worker and reads it, in one script: `busy` while another worker
   * whose lease is live holds it, `missing` when it is not stored. A claim fences off every later
   * write of the run's previous holder; `takenOverFrom` names that holder when it had not let
   * the run go (its lease lapsed: it died, or was cut off). The run read is also what the next
   * {@link load} of it answers, without reading it again. An ended run is read, not claimed,
   * unless `revive` (a redrive).
   */
  async claim(runId: string, revive = false): Promise<RunClaim> {
    if (this.claims === undefined)
      throw DirigentError.fatal(ErrorCode.INTERNAL, 'Only a store with an owner claims runs.');
    const { claim, read } = await this.claims.claim(this.runKey(runId), runId, revive);
    if (read !== undefined) this.rememberRead(runId, read);
    return claim;
  }

  /**
   * Lets a run go: another worker may claim it at once. This store stops writing it (until it
   * claims it again).
   */
  async release(runId: string): Promise<void> {
    this.events?.drop(runId);
    await this.claims?.release(this.runKey(runId), runId);
  }

  /** Forgets this store's claim of a run without a word to Redis (an ended run has no owner). */
  forgetClaim(runId: string): void {
    this.events?.drop(runId);
    this.claims?.forget(runId);
  }

  /**
   * Run records, newest first (by `startedAt`), optionally only those with a status and/or of a
   * directive, at most `limit`. Index entries whose run has expired are skipped and removed.
   */
  list(filter: RunListFilter = {}): Promise<RunRecord[]> {
    return listStoredRuns(this, filter);
  }

  /** Removes the index entries of a run whose hash is gone (nothing while it exists). */
  forgetDangling(runId: string, directive = ''): Promise<number> {
    return this.forget(runId, 'dangling', directive);
  }

  /** Deletes a run and its index entries; resolves with whether it was stored. */
  async delete(runId: string): Promise<boolean> {
    return this.written.serially(runId, async () => {
      this.written.forget(runId);
      return (await this.forget(runId, 'delete')) === 1;
    });
  }

  /**
   * Removes the index entries of ended runs whose retention is over (their hashes have expired),
   * at most `max` in one atomic script; resolves with how many runs were removed. Every save
   * already retires two such runs, and {@link list} never shows them: call this only to clean up
   * at once (after a burst of runs, or on a timer). Also removes the finished jobs of expired
   * runs, and any finished run or tool job past its age (see `expired-run-jobs.ts`). A store
   * that saves ended runs prunes on its own when they expire (see `expiry-sweeper.ts`).
   */
  async prune(max = 1000): Promise<number> {
    await removeExpiredRunJobs(this.redis, this.prefix, max);
    return this.redis.dirigentPruneRuns(`${this.prefix}:runs:expiring`, this.prefix, max);
  }

  // ---- internals ----

  private forget(runId: string, mode: 'delete' | 'dangling', directive = ''): Promise<number> {
    return this.redis.dirigentForgetRun(this.runKey(runId), this.prefix, runId, mode, directive);
  }

  /** The version a save reply carries, or the `RUN_CONFLICT` or `RUN_TAKEN_OVER` error it stands for. */
  private checked(
    runId: string,
    reply: [string, number, string?],
    options: SaveRunOptions,
  ): number {
    const [outcome, version, holder] = reply;
    if (outcome === 'fenced') {
      this.written.forget(runId);
      this.forgetClaim(runId);
      throw runTakenOver(runId, this.owner ?? '', holder ?? '');
    }
    if (outcome !== 'conflict') {
      this.claims?.wrote(runId); // a fenced store's first write of a run created it: epoch 1
      return version;
    }
    this.written.forget(runId);
    throw runConflict(runId, options.expectVersion, version);
  }

  /** Remembers the fields of a run just read, as if this store had written them. */
  private rememberRead(runId: string, read: StoredHash): void {
    if (read.etag !== undefined && !ENDED.has(read.run.record.status))
      this.written.remember(runId, { etag: read.etag, fields: read.fields });
  }
}
