/** What a run worker needs (see `run-worker.ts`): its Redis, project, concurrency and timing. */
import type { Redis } from 'ioredis';
import type { Logger } from '../../telemetry/logger.js';
import type { Telemetry, TelemetryOptions } from '../../telemetry/telemetry.js';
import type { ToolWorker } from '../tool-worker/tool-worker.js';
import type { WorkerTiming } from '../worker-timing.js';

/** What a run worker needs. */
export interface RunWorkerOptions {
  redis: Redis;
  prefix: string;
  /**
   * The project this worker serves: directives and tools resolve in it, whatever machine started
   * the run (default: the current folder).
   */
  projectDir?: string;
  /** Runs driven at once by this process (default 50: they mostly wait on tool jobs). */
  concurrency?: number;
  /** How long finished runs are kept in Redis, seconds. */
  retentionSeconds?: number;
  timing?: WorkerTiming;
  /**
   * This worker's lease, ms: others take its runs over this long after it stops renewing it (see
   * `worker-lease.ts`; default `DIRIGENT_WORKER_LEASE_MS`, else 3 s).
   */
  leaseMs?: number;
  /** Where the runs' spans and metrics go (see `telemetry/telemetry.ts`); default none. */
  telemetry?: Telemetry | TelemetryOptions;
  /** Where the worker logs what happens to runs (default: nowhere). */
  logger?: Logger;
  /**
   * The tool worker of this process, if it runs one for the same project and Redis: a step's
   * call runs on it at once when it has a free slot and no lock or rate limit applies (an eager
   * call, see `queue-dispatcher.ts`), instead of going through the tools queue.
   */
  tools?: ToolWorker;
}
