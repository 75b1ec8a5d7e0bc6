/**
 * Runs on the workers of a Redis deployment: this process enqueues, waits and reads; the workers
 * run (see `redis/run-worker/`).
 */
import type { RedisClient } from '../redis-client.js';
import { isDirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import type { DirectiveLoader, LoadedDirective } from '../../engine/directive-loader.js';
import { queuedRecord, type RunRecord } from '../../engine/run-record.js';
import type { StoredRun } from '../../engine/run-store.js';
import type { RunSource } from '../run-job.js';
import { runSourceOf } from '../run-source.js';
import { pausedIn } from '../../operations/pause.js';
import { runConcurrencyOf, type RunConcurrency } from '../../engine/run-concurrency.js';
import { RedisPauseBook } from './redis-pause-book.js';
import { RunsClient } from './runs-client.js';
import { ShardLayout } from '../shards/shard-layout.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import { countStoredRuns } from '../run-store/redis-run-counts.js';
import { RedisRunChanges } from '../run-store/redis-run-changes.js';
import type { CountFilter, RunCounts } from '../../run-backend/run-counts.js';
import type { ChangeSource } from '../../run-backend/run-changes.js';
import type { BackendStart, RunBackend } from '../../run-backend/run-backend.js';
import type { FollowOptions, RunFeed } from '../../run-backend/run-feed.js';
import type { CancelOptions } from '../../engine/cancel-options.js';
import { FeedReader } from './feed-reader.js';
import {
  decodeCursor,
  pageFrom,
  pageSize,
  type RunFilter,
  type RunPage,
} from '../../run-backend/run-filter.js';

/** What a backend of one shard of many is given (see `sharded-backend.ts`). */
export interface ShardOfBackend {
  /** The deployment's layout: the shard's backend shares its connection and loader. */
  layout?: ShardLayout;
  /** Draws a run id of this shard. */
  newKey?: () => string;
}

/** See the module comment. */
export class RedisBackend implements RunBackend {
  readonly mode = 'redis';
  readonly client: RunsClient;
  readonly pauses: RedisPauseBook;
  private readonly feeds: FeedReader;
  private readonly sources = new WeakMap<
    LoadedDirective,
    { source: RunSource; generation: number }
  >();

  constructor(
    private readonly redis: RedisClient,
    readonly prefix: string,
    private readonly loader: DirectiveLoader,
    telemetry: Telemetry | undefined,
    private readonly shard: ShardOfBackend = {},
  ) {
    const layout = shard.layout ?? ShardLayout.single(prefix);
    this.client = new RunsClient(redis, prefix, telemetry, {
      layout,
      ...(shard.newKey && { newKey: shard.newKey }),
    });
    this.pauses = new RedisPauseBook(redis, layout.home);
    this.feeds = new FeedReader(redis, this.client.store, (runId) => this.client.status(runId));
  }

  async start(
    loaded: LoadedDirective,
    inputs: Record<string, unknown>,
    options: BackendStart,
  ): Promise<RunRecord> {
    const source = await this.sourceOf(loaded);
    // Starts with no id of their own may share a job with others (see `run-worker/start-group.ts`).
    const runId = await this.client.start(source, inputs, {
      ...(options.runId !== undefined && { runId: options.runId }),
      trigger: options.trigger,
      ...(options.tags && { tags: options.tags }),
      ...(options.priority !== undefined && { priority: options.priority }),
      ...(options.from && { from: options.from }),
      ...concurrencyOf(loaded, inputs),
    });
    return queuedRecord(runId, source.directive, Date.now());
  }

  /**
   * What a start job carries for `loaded`, made once while the project's files stay as they were
   * (the resolver watches them): hashing its text and its tools is not a cost of every start.
   */
  private async sourceOf(loaded: LoadedDirective): Promise<RunSource> {
    const generation = this.loader.items.generation;
    const known = this.sources.get(loaded);
    if (known !== undefined && known.generation === generation) return known.source;
    const source = await runSourceOf(loaded, this.loader.items);
    this.sources.set(loaded, { source, generation });
    return source;
  }

  get(runId: string): Promise<RunRecord | undefined> {
    return this.client.status(runId).catch((err: unknown) => {
      if (isDirigentError(err, ErrorCode.RUN_NOT_FOUND)) return undefined;
      throw err;
    });
  }

  async list(filter: RunFilter): Promise<RunPage> {
    const limit = pageSize(filter);
    const records = await this.client.list({
      limit: limit + 1,
      ...(filter.status !== undefined && { status: filter.status }),
      ...(filter.directive !== undefined && { directive: filter.directive }),
      ...(filter.tags !== undefined && { tags: filter.tags }),
      ...(filter.since !== undefined && { since: filter.since }),
      ...(filter.until !== undefined && { until: filter.until }),
      ...(filter.cursor !== undefined && { after: decodeCursor(filter.cursor) }),
    });
    return pageFrom(records, limit);
  }

  stored(runId: string): Promise<StoredRun | undefined> {
    return this.client.store.load(runId);
  }

  counts(filter: CountFilter): Promise<RunCounts> {
    return countStoredRuns(this.client.store, filter);
  }

  changes(): ChangeSource {
    return new RedisRunChanges(this.client.store);
  }

  wait(runId: string, timeoutMs?: number): Promise<RunRecord> {
    return this.client.wait(runId, timeoutMs);
  }

  cancel(runId: string, reason: string, options?: CancelOptions): Promise<RunRecord> {
    return this.client.cancel(runId, reason, options);
  }

  signal(runId: string, name: string, payload: unknown): Promise<RunRecord> {
    return this.client.signal(runId, name, payload);
  }

  async resumePaused(): Promise<number> {
    const state = await this.pauses.state();
    return this.client.unpause((directive) => pausedIn(state, directive));
  }

  redrive(runId: string, by: string): Promise<{ settled: Promise<RunRecord> }> {
    return this.client.redrive(runId, by);
  }

  follow(runId: string, options?: FollowOptions): Promise<RunFeed> {
    return this.feeds.follow(runId, options);
  }

  async ready(): Promise<{ ok: boolean; detail: string }> {
    const workers = await this.client.workers();
    return workers > 0
      ? { ok: true, detail: `${workers} worker${workers === 1 ? '' : 's'} take runs` }
      : { ok: false, detail: 'no worker takes runs (start `dirigent worker`)' };
  }

  async close(): Promise<void> {
    this.feeds.close();
    await this.client.close();
    if (this.shard.layout !== undefined) return; // the sharded backend closes what they share
    this.loader.items.close();
    this.redis.disconnect();
  }
}

/** A run's concurrency key, for its start (see `engine/run-concurrency.ts`). */
function concurrencyOf(
  loaded: LoadedDirective,
  inputs: Record<string, unknown>,
): { concurrency?: RunConcurrency } {
  const concurrency = runConcurrencyOf(loaded.compiled.directive, inputs);
  return concurrency === undefined ? {} : { concurrency };
}
