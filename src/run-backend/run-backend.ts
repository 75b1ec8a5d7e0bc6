import type { LoadedDirective } from '../engine/directive-loader.js';
import type { RunRecord } from '../engine/run-record.js';
import type { StoredRun } from '../engine/run-store.js';
import type { RerunSeed } from '../engine/rerun.js';
import type { PauseBook } from '../operations/pause.js';
import type { RunTags } from '../engine/run-tags.js';
import type { RunTrigger } from '../telemetry/run-trace.js';
import type { CountFilter, RunCounts } from './run-counts.js';
import type { ChangeSource } from './run-changes.js';
import type { CancelOptions } from '../engine/cancel-options.js';
import type { RunFilter, RunPage } from './run-filter.js';
import type { FollowOptions, RunFeed } from './run-feed.js';

/** How a backend starts a run: its id when the caller chose it, its trigger, the start's tags. */
export interface BackendStart {
  runId?: string;
  trigger: RunTrigger;
  /** Tags the start gives the run, over its directive's (see `engine/run-tags.ts`). */
  tags?: RunTags;
  /** 1 to 10, higher first when workers are busy (see `engine/run-priority.ts`). */
  priority?: number;
  /** A rerun of another run from one of its steps (see `engine/rerun.ts`). */
  from?: RerunSeed;
}

/**
 * Where the operations run runs: in this process ({@link EmbeddedBackend}) or on the workers of a
 * Redis deployment ({@link RedisBackend}). Directives are resolved and inputs validated before
 * a backend is asked; a backend only runs, reads and steers.
 */
export interface RunBackend {
  readonly mode: 'embedded' | 'redis';
  /** The pauses of the deployment (see `operations/pause.ts`). */
  readonly pauses: PauseBook;
  /**
   * Begins the held steps of the paused runs whose directive is no longer paused, in the order
   * the runs started; resolves with how many runs it resumed, once they are under way (embedded:
   * once they end or wait again) or queued (Redis).
   */
  resumePaused(): Promise<number>;
  /**
   * Begins a run of `loaded` with validated `inputs` under `runId`; resolves once it is under way
   * (embedded) or queued (Redis), with its record as it stands then.
   */
  start(
    loaded: LoadedDirective,
    inputs: Record<string, unknown>,
    options: BackendStart,
  ): Promise<RunRecord>;
  /** The run's record (`queued` while no worker has taken it up), or undefined. */
  get(runId: string): Promise<RunRecord | undefined>;
  list(filter: RunFilter): Promise<RunPage>;
  /** What the store keeps of a run (its steps, inputs, source), or undefined (queued, unknown). */
  stored(runId: string): Promise<StoredRun | undefined>;
  /** How many runs match `filter`, by status. */
  counts(filter: CountFilter): Promise<RunCounts>;
  /** A new source of the runs that change, for the run-list feed (`operations/run-list-feed.ts`). */
  changes(): ChangeSource;
  /**
   * The run's record once it ends or waits, or as it stands after `timeoutMs`; `RUN_NOT_FOUND`
   * when there is no such run.
   */
  wait(runId: string, timeoutMs?: number): Promise<RunRecord>;
  /** Cancels a run, after its compensations unless `options.compensate` is false. */
  cancel(runId: string, reason: string, options?: CancelOptions): Promise<RunRecord>;
  /** Delivers a signal, then resolves once the run ends or waits again. */
  signal(runId: string, name: string, payload: unknown): Promise<RunRecord>;
  /**
   * Redrives a run that failed or was cancelled (see `engine/redrive.ts`), as asked `by` someone;
   * resolves once the redrive is under way (embedded: its first events are in the run's feed) or
   * queued (Redis), with when the run ends or waits again. `RUN_NOT_REDRIVABLE` for another run.
   */
  redrive(runId: string, by: string): Promise<{ settled: Promise<RunRecord> }>;
  /**
   * The run's event feed (see `run-feed.ts`), once it is followed: `run.state` with the record as
   * it stands, then every event after it (or, with `after`, the events after that id). Nothing
   * the record shows is told again, nothing after it is missed. `RUN_NOT_FOUND` when there is no
   * such run.
   */
  follow(runId: string, options?: FollowOptions): Promise<RunFeed>;
  /** Whether workers take runs (always, embedded). */
  ready(): Promise<{ ok: boolean; detail: string }>;
  /** Closes what the backend opened; embedded, runs under way get `graceMs` to end, then are cancelled. */
  close(graceMs?: number): Promise<void>;
}
