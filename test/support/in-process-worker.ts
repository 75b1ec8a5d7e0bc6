/**
 * Workers in the test's own process, on the test's Redis and prefix: a run worker and a tool
 * worker, wired as `dirigent worker` wires them (a step's call runs in process: eager calls) or
 * apart (every call a tool job). And the environment of `dirigent worker` processes with the
 * default settings.
 */
import { RunWorker } from '../../src/redis/run-worker/run-worker.js';
import { ToolWorker } from '../../src/redis/tool-worker/tool-worker.js';
import type { TelemetryOptions } from '../../src/telemetry/telemetry.js';
import type { TestRedis } from './redis.js';

/** How an in-process worker is made. */
export interface InProcessWorkerOptions {
  projectDir: string;
  /** The run worker runs a step's call on the tool worker beside it (default true). */
  eager?: boolean;
  /** The tool worker's concurrency (default the worker's own). */
  toolConcurrency?: number;
  /** How long a call waits for a slot of the tool worker before it becomes a job, ms. */
  slotWaitMs?: number;
  /** The run worker's concurrency, in runs (default the worker's own). */
  concurrency?: number;
  /** Where both workers' spans and metrics go (default none). */
  telemetry?: TelemetryOptions;
}

/** A run worker and a tool worker in this process (see {@link inProcessWorker}). */
export type InProcessWorker = ReturnType<typeof inProcessWorker>;

/** A run worker and a tool worker in this process; `close()` closes both, once. */
export function inProcessWorker(redis: TestRedis, options: InProcessWorkerOptions) {
  const connection = redis.connect();
  const { projectDir } = options;
  const tools = new ToolWorker({
    redis: connection,
    prefix: redis.prefix,
    projectDir,
    ...(options.toolConcurrency !== undefined && { concurrency: options.toolConcurrency }),
    ...(options.slotWaitMs !== undefined && { slotWaitMs: options.slotWaitMs }),
    ...(options.telemetry && { telemetry: options.telemetry }),
  });
  const runs = new RunWorker({
    redis: connection,
    prefix: redis.prefix,
    projectDir,
    ...(options.eager !== false && { tools }),
    ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
    ...(options.telemetry && { telemetry: options.telemetry }),
  });
  const w = {
    runs,
    tools,
    closed: false,
    async close() {
      if (w.closed) return;
      w.closed = true;
      await Promise.all([runs.close(), tools.close()]);
    },
  };
  return w;
}

/**
 * The environment of a `dirigent worker` process on the test's Redis and prefix, with the default
 * settings: no lock or lease override from the environment the tests run in.
 */
export function defaultWorkerEnv(redis: TestRedis): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    REDIS_URL: redis.url,
    DIRIGENT_PREFIX: redis.prefix,
  };
  delete env.DIRIGENT_LOCK_MS;
  delete env.DIRIGENT_WORKER_LEASE_MS;
  return env;
}
