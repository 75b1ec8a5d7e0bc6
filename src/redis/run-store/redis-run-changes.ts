/**
 * The {@link ChangeSource} of a Redis deployment, from the run store's indexes (see
 * `redis/run-store/run-hash.ts`): each look reads the ids of the runs started in the last `windowMs` and of
 * those running or waiting (at most `cap` of each status, newest first), and of those it saw not ended,
 * then each one's plain `status` field, and the record (without its steps) only of those whose
 * status changed. A run
 * is stored when a worker takes it up, with that moment as its start, so the window covers the
 * clocks of the machines and the time a first write takes; runs still queued are not stored yet.
 */
import { RUN_STATUSES, type RunStatus } from '../../engine/run-record.js';
import type { RedisRunStore } from './redis-run-store.js';
import { answer } from './redis-run-counts.js';
import { readRunHashes } from './list-stored-runs.js';
import { recordOf } from './run-hash.js';
import {
  SeenRuns,
  summaryOf,
  type ChangeSource,
  type RunSummary,
} from '../../run-backend/run-changes.js';

/** The statuses of stored runs, each with its index. */
const STORED = RUN_STATUSES.filter((s) => s !== 'queued');

/** See the module comment. */
export class RedisRunChanges implements ChangeSource {
  private readonly seen = new SeenRuns();

  constructor(
    private readonly store: RedisRunStore,
    private readonly windowMs = 30_000,
    private readonly cap = 2000,
  ) {}

  async poll(): Promise<RunSummary[]> {
    const now = Date.now();
    const { redis } = this.store;
    const newest = (status: RunStatus, min: number | string) =>
      redis.zrevrangebyscore(
        this.store.indexKey({ status }),
        '+inf',
        min,
        'WITHSCORES',
        'LIMIT',
        0,
        this.cap,
      );
    // Running and waiting runs whenever they started, the others in the window.
    const pages = await Promise.all(
      STORED.map((status) =>
        newest(status, status === 'running' || status === 'waiting' ? '-inf' : now - this.windowMs),
      ),
    );
    const startOf = new Map<string, number>();
    for (const page of pages)
      for (let i = 0; i < page.length; i += 2) startOf.set(page[i]!, Number(page[i + 1]));
    for (const id of this.seen.unended()) if (!startOf.has(id)) startOf.set(id, now);
    const ids = [...startOf.keys()];
    const statuses = await this.read(ids, 'status');
    const changed = this.seen.update(
      ids.map((runId, i) => ({
        runId,
        status: statuses[i] as string | null,
        startedAt: startOf.get(runId)!,
      })),
    );
    this.seen.prune(now - this.windowMs);
    const hashes = await readRunHashes(this.store, changed, false);
    return hashes.flatMap((hash) => {
      const record = recordOf(hash);
      return record === undefined ? [] : [summaryOf(record)];
    });
  }

  /** One field of each run's hash, pipelined. */
  private async read(ids: string[], field: string): Promise<unknown[]> {
    if (ids.length === 0) return [];
    const pipeline = this.store.redis.pipeline();
    for (const id of ids) pipeline.hget(this.store.runKey(id), field);
    return ((await pipeline.exec()) ?? []).map(answer);
  }
}
