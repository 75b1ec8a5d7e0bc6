/**
 * A Redis deployment spread over shards (`shards/shard-layout.ts`), as the operations see it: one
 * {@link RedisBackend} per shard, and this routing between them. What is about one run goes to
 * its shard; a start without an id goes to the shards in turn, with an id of that shard; lists,
 * counts and the run-list feed read every shard and merge.
 */
import type { RedisClient } from '../redis-client.js';
import type { DirectiveLoader, LoadedDirective } from '../../engine/directive-loader.js';
import type { RunRecord } from '../../engine/run-record.js';
import type { StoredRun } from '../../engine/run-store.js';
import type { CancelOptions } from '../../engine/cancel-options.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import { noCounts, type CountFilter, type RunCounts } from '../../run-backend/run-counts.js';
import type { ChangeSource, RunSummary } from '../../run-backend/run-changes.js';
import type { BackendStart, RunBackend } from '../../run-backend/run-backend.js';
import type { FollowOptions, RunFeed } from '../../run-backend/run-feed.js';
import {
  encodeCursor,
  pageSize,
  type RunFilter,
  type RunPage,
} from '../../run-backend/run-filter.js';
import { RUN_STATUSES } from '../../engine/run-record.js';
import type { ShardLayout } from '../shards/shard-layout.js';
import { RedisBackend } from './redis-backend.js';
import { RedisPauseBook } from './redis-pause-book.js';

/** See the module comment. */
export class ShardedBackend implements RunBackend {
  readonly mode = 'redis';
  readonly pauses: RedisPauseBook;
  /** One backend per shard, by shard number. */
  readonly shards: readonly RedisBackend[];
  /** The shard the next start without an id goes to. */
  private turn = Math.floor(Math.random() * 1024);

  constructor(
    private readonly redis: RedisClient,
    private readonly layout: ShardLayout,
    private readonly loader: DirectiveLoader,
    telemetry: Telemetry | undefined,
  ) {
    this.shards = layout.prefixes.map(
      (prefix, shard) =>
        new RedisBackend(redis, prefix, loader, telemetry, {
          layout,
          newKey: () => layout.newRunId(shard),
        }),
    );
    this.pauses = new RedisPauseBook(redis, layout.home);
  }

  /** The backend of the run's shard. */
  private of(runId: string): RedisBackend {
    return this.shards[this.layout.shardOf(runId)]!;
  }

  start(
    loaded: LoadedDirective,
    inputs: Record<string, unknown>,
    options: BackendStart,
  ): Promise<RunRecord> {
    const shard =
      options.runId !== undefined
        ? this.of(options.runId)
        : this.shards[this.turn++ % this.shards.length]!;
    return shard.start(loaded, inputs, options);
  }

  get(runId: string): Promise<RunRecord | undefined> {
    return this.of(runId).get(runId);
  }

  stored(runId: string): Promise<StoredRun | undefined> {
    return this.of(runId).stored(runId);
  }

  wait(runId: string, timeoutMs?: number): Promise<RunRecord> {
    return this.of(runId).wait(runId, timeoutMs);
  }

  cancel(runId: string, reason: string, options?: CancelOptions): Promise<RunRecord> {
    return this.of(runId).cancel(runId, reason, options);
  }

  signal(runId: string, name: string, payload: unknown): Promise<RunRecord> {
    return this.of(runId).signal(runId, name, payload);
  }

  redrive(runId: string, by: string): Promise<{ settled: Promise<RunRecord> }> {
    return this.of(runId).redrive(runId, by);
  }

  follow(runId: string, options?: FollowOptions): Promise<RunFeed> {
    return this.of(runId).follow(runId, options);
  }

  /** Every shard's page of the filter, merged: the newest `limit` of them all, and a cursor. */
  async list(filter: RunFilter): Promise<RunPage> {
    const limit = pageSize(filter);
    const pages = await Promise.all(this.shards.map((s) => s.list(filter)));
    // Each shard answers up to `limit` runs in list order and says whether it has more: the
    // merged page is the first `limit` of them all; one more of any shard means a next page.
    const merged = pages
      .flatMap((p) => p.runs)
      .sort((a, b) => b.startedAt - a.startedAt || (a.runId < b.runId ? 1 : -1));
    const runs = merged.slice(0, limit);
    const more = merged.length > limit || pages.some((p) => p.next !== undefined);
    return more ? { runs, next: encodeCursor(runs[runs.length - 1]!) } : { runs };
  }

  async counts(filter: CountFilter): Promise<RunCounts> {
    const all = await Promise.all(this.shards.map((s) => s.counts(filter)));
    const sum = noCounts();
    for (const c of all) {
      sum.total += c.total;
      for (const status of RUN_STATUSES) sum.byStatus[status] += c.byStatus[status];
    }
    return sum;
  }

  changes(): ChangeSource {
    const sources = this.shards.map((s) => s.changes());
    return {
      async poll(): Promise<RunSummary[]> {
        return (await Promise.all(sources.map((s) => s.poll()))).flat();
      },
    };
  }

  async resumePaused(): Promise<number> {
    const resumed = await Promise.all(this.shards.map((s) => s.resumePaused()));
    return resumed.reduce((a, b) => a + b, 0);
  }

  async ready(): Promise<{ ok: boolean; detail: string }> {
    const shards = await Promise.all(this.shards.map((s) => s.ready()));
    const idle = shards.flatMap((s, i) => (s.ok ? [] : [i]));
    if (idle.length === 0)
      return { ok: true, detail: `${shards[0]!.detail}, on each of ${shards.length} shards` };
    return {
      ok: false,
      detail: `no worker takes the runs of shard${idle.length === 1 ? '' : 's'} ${idle.join(', ')} (start \`dirigent worker\` with DIRIGENT_SHARDS=${this.layout.count})`,
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.shards.map((s) => s.close()));
    this.loader.items.close();
    this.redis.disconnect();
  }
}
