/**
 * Runs on the workers of a Redis deployment: this process enqueues, waits and reads; the workers
 * run (see `redis/run-worker/`).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { DirectiveLoader, LoadedDirective } from '../../engine/directive-loader.js';
import type { EngineObserver } from '../../engine/engine-options.js';
import { queuedRecord, type RunRecord } from '../../engine/run-record.js';
import type { StoredRun } from '../../engine/run-store.js';
import type { RunSource } from '../run-job.js';
import { runSourceOf } from '../run-source.js';
import { RunsClient } from './runs-client.js';
import type { RunTrigger } from '../../telemetry/run-trace.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import { pollRun } from '../../run-backend/poll-watch.js';
import { countStoredRuns } from '../run-store/redis-run-counts.js';
import { RedisRunChanges } from '../run-store/redis-run-changes.js';
import type { CountFilter, RunCounts } from '../../run-backend/run-counts.js';
import type { ChangeSource } from '../../run-backend/run-changes.js';
import type { RunBackend, Watch } from '../../run-backend/run-backend.js';
import {
  decodeCursor,
  pageFrom,
  pageSize,
  type RunFilter,
  type RunPage,
} from '../../run-backend/run-filter.js';

/** See the module comment. */
export class RedisBackend implements RunBackend {
  readonly mode = 'redis';
  readonly client: RunsClient;
  /** Progress replays of runs started here with an observer, until they end or wait. */
  private readonly replays = new Map<string, () => void>();
  private readonly sources = new WeakMap<
    LoadedDirective,
    { source: RunSource; generation: number }
  >();

  constructor(
    private readonly redis: Redis,
    readonly prefix: string,
    private readonly loader: DirectiveLoader,
    telemetry: Telemetry | undefined,
  ) {
    this.client = new RunsClient(redis, prefix, telemetry);
  }

  async start(
    loaded: LoadedDirective,
    inputs: Record<string, unknown>,
    options: { runId?: string; trigger: RunTrigger; observer?: EngineObserver },
  ): Promise<RunRecord> {
    const source = await this.sourceOf(loaded);
    const { observer, trigger } = options;
    // A watched run is subscribed to before its job exists, so its first step is heard; other
    // starts with no id of their own may share a job with others (see `redis/run-worker/start-group.ts`).
    let runId = options.runId;
    if (observer) {
      runId ??= randomUUID();
      this.replays.set(runId, await this.client.watchEvents(runId, observer));
    }
    runId = await this.client.start(source, inputs, {
      ...(runId !== undefined && { runId }),
      trigger,
      watch: observer !== undefined,
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
      if ((err as { code?: string }).code === 'RUN_NOT_FOUND') return undefined;
      throw err;
    });
  }

  async list(filter: RunFilter): Promise<RunPage> {
    const limit = pageSize(filter);
    const records = await this.client.list({
      limit: limit + 1,
      ...(filter.status !== undefined && { status: filter.status }),
      ...(filter.directive !== undefined && { directive: filter.directive }),
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

  async wait(runId: string, timeoutMs?: number): Promise<RunRecord> {
    try {
      return await this.client.wait(runId, timeoutMs);
    } finally {
      this.replays.get(runId)?.();
      this.replays.delete(runId);
    }
  }

  cancel(runId: string, reason: string): Promise<RunRecord> {
    return this.client.cancel(runId, reason);
  }

  async signal(
    runId: string,
    name: string,
    payload: unknown,
    observer?: EngineObserver,
  ): Promise<RunRecord> {
    const stop = observer && (await this.client.watchEvents(runId, observer));
    try {
      return await this.client.signal(runId, name, payload, observer !== undefined);
    } finally {
      stop?.();
    }
  }

  async watch(runId: string, observer: EngineObserver): Promise<Watch> {
    const stored = await this.client.store.load(runId);
    const record = stored?.record ?? (await this.client.status(runId));
    const stop = pollRun(
      () => this.client.store.load(runId),
      observer,
      stored ?? { record, steps: {} },
    );
    return { record, stop };
  }

  async ready(): Promise<{ ok: boolean; detail: string }> {
    const workers = await this.client.workers();
    return workers > 0
      ? { ok: true, detail: `${workers} worker${workers === 1 ? '' : 's'} take runs` }
      : { ok: false, detail: 'no worker takes runs (start `dirigent worker`)' };
  }

  async close(): Promise<void> {
    for (const stop of this.replays.values()) stop();
    await this.client.close();
    this.loader.items.close();
    this.redis.disconnect();
  }
}
