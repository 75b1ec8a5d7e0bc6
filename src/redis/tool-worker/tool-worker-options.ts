/**
 * What a tool worker needs (see `tool-worker.ts`): its Redis, project, concurrency and timing; and
 * what it tells of the calls it runs, to whoever passed {@link ToolWorkerOptions.events}.
 */
import type { RedisClient } from '../redis-client.js';
import type { Logger } from '../../telemetry/logger.js';
import type { Telemetry, TelemetryOptions } from '../../telemetry/telemetry.js';
import type { WorkerTiming } from '../worker-timing.js';
import type { ShardLayout } from '../shards/shard-layout.js';

/** What a tool worker needs. */
export interface ToolWorkerOptions {
  /** Connection for BullMQ (blocking commands) and for the worker's own reads. */
  redis: RedisClient;
  prefix: string;
  /**
   * The deployment's layout over Redis (`shards/shard-layout.ts`) when `prefix` is one of its
   * shards: where the pauses, locks, rate limits and concurrency keys the shards share live.
   * Default: one shard under `prefix`.
   */
  layout?: ShardLayout;
  /**
   * The project this worker serves: tools resolve in it and are confined to it, whatever machine
   * made the call (default: the current folder).
   */
  projectDir?: string;
  /** Tool jobs run at once in this process (default 8). */
  concurrency?: number;
  /**
   * How long a call the run worker beside this one offers to run in process (an eager call) waits
   * for a slot when all are taken, ms, before it goes to the tools queue (default 100; 0: not at
   * all). See `slot-waits.ts`.
   */
  slotWaitMs?: number;
  timing?: WorkerTiming;
  /**
   * This worker's lease, ms: others take its jobs over this long after it stops renewing it. It
   * is renewed every sixth of it (with the other leases this process keeps on the same connection),
   * so an event loop held up for up to five sixths of it at once never makes a live worker look
   * dead, and a worker whose event loop keeps stalling asks for up to three times as long (see
   * `takeover/lease-renewer.ts`). Default `DIRIGENT_WORKER_LEASE_MS`, else 1500 (renewed every
   * 250 ms).
   */
  leaseMs?: number;
  /** Where the tool jobs' spans and metrics go (see `telemetry/telemetry.ts`); default none. */
  telemetry?: Telemetry | TelemetryOptions;
  /** Where the worker logs failed tool jobs (default: nowhere). */
  logger?: Logger;
  /**
   * Told what happens to the calls this worker runs ({@link ToolWorkerEvents}), as it happens.
   * Called synchronously: what it throws is logged and goes no further. Default: no one is told.
   */
  events?: ToolEventSink;
}

/**
 * A tool call failed on this worker: as a tool job, or in the process of the run's driver (an
 * eager call). Told once per call, whatever became of it after.
 */
export interface ToolFailedEvent {
  /** The tool worker's lease name (`dirigent-tools/<BullMQ worker id>`). */
  worker: string;
  runId: string;
  /** The step that made the call. */
  step: string;
  /** The tool's item id, e.g. `dirigent/shell/bash`. */
  itemId: string;
  /** Which try of the step this call was (1 the first). */
  attempt: number;
  /** The call's tool job id (for an eager call, the id its job would have had). */
  jobId: string;
  /** The call ran in the process driving its run (an eager call), not as a tool job. */
  inProcess: boolean;
  /** How it ended, as the `dirigent.tool.outcome` metric says it. */
  outcome: 'failed' | 'timed_out' | 'cancelled';
  error: { code: string; message: string };
  /**
   * Whether the failure lets the step try again (the error's `retryable` flag: a non-zero exit,
   * a timeout, a lost worker): the step makes another attempt when its retry policy has attempts
   * left after `attempt`. A false one (invalid parameters, a refused tool, a cancelled run) ends
   * the step's tries.
   */
  retryable: boolean;
}

/** The events of a tool worker, by name: what each one tells. */
export interface ToolWorkerEvents {
  /** A tool call failed on this worker (see {@link ToolFailedEvent}). */
  'tool:failed': ToolFailedEvent;
}

/** Where a tool worker tells its events ({@link ToolWorkerOptions.events}). */
export type ToolEventSink = <K extends keyof ToolWorkerEvents>(
  name: K,
  event: ToolWorkerEvents[K],
) => void;
