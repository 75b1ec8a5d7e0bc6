/** The options of `RedisRunStore` and of its saves. */
import { DEFAULT_RETENTION_SECONDS } from '../../policy/project-policy.js';
import type { ReplicaWait } from './replica-wait.js';

/** What a `RedisRunStore` is built with. */
export interface RedisRunStoreOptions {
  /** Key prefix. Default: `dirigent`. */
  prefix?: string;
  /**
   * Seconds a run is kept after it completed, failed or was cancelled (the hash's `EXPIRE`,
   * refreshed by every save of an ended run), when neither its directive (`<retention days>`)
   * nor its project (`retention` in `.ai/config/dirigent.yaml`) sets one: those win (see
   * `engine/run-retention.ts`). `Infinity` keeps such runs until `RedisRunStore.delete`.
   * Default: 7 days.
   */
  retentionSeconds?: number;
  /**
   * How many runs' last written fields this store remembers, so that a save sends only the fields
   * that changed (see `RedisRunStore.save`). 0 turns it off. Default: 1000.
   */
  cachedRuns?: number;
  /**
   * The lease name of the worker writing through this store (see `worker-lease.ts`). With it the
   * store is fenced: it writes only runs it created or claimed (`RedisRunStore.claim`), its
   * loads claim, and a write after another worker took the run over fails with `RUN_TAKEN_OVER`.
   */
  owner?: string;
  /**
   * Wait for replicas to hold each save that records a step's or the run's end (see
   * `replica-wait.ts`). Default: none.
   */
  replicaWait?: ReplicaWait;
}

/** Options of `RedisRunStore.save` and `RedisRunStore.saveSteps`. */
export interface SaveRunOptions {
  /**
   * Save only if the stored run still has this version (0: only if there is no such run yet);
   * otherwise reject with `RUN_CONFLICT` and write nothing.
   */
  expectVersion?: number;
}

/** Default retention of ended runs: 7 days. */
export { DEFAULT_RETENTION_SECONDS };
