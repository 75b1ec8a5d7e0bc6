/**
 * What a run worker needs (see `run-worker.ts`): its Redis, project, concurrency and timing; and
 * what it tells of the runs it drives, to whoever passed {@link RunWorkerOptions.events}.
 */
import type { RedisClient } from '../redis-client.js';
import type { RunRecord } from '../../engine/run-record.js';
import type { Logger } from '../../telemetry/logger.js';
import type { RunTrigger } from '../../telemetry/run-trace.js';
import type { Telemetry, TelemetryOptions } from '../../telemetry/telemetry.js';
import type { ToolWorker } from '../tool-worker/tool-worker.js';
import type { WorkerTiming } from '../worker-timing.js';
import type { ShardLayout } from '../shards/shard-layout.js';
import type { ReplicaWait } from '../run-store/replica-wait.js';

/** What a run worker needs. */
export interface RunWorkerOptions {
  redis: RedisClient;
  prefix: string;
  /**
   * The deployment's layout over Redis (`shards/shard-layout.ts`) when `prefix` is one of its
   * shards: where the pauses, locks, rate limits and concurrency keys the shards share live.
   * Default: one shard under `prefix`.
   */
  layout?: ShardLayout;
  /**
   * Wait for replicas to hold each step's end before the run goes on (see
   * `run-store/replica-wait.ts`). Default: none.
   */
  replicaWait?: ReplicaWait;
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
   * This worker's lease, ms: others take its runs over this long after it stops renewing it. It
   * is renewed every sixth of it (with the other leases this process keeps on the same connection),
   * so an event loop held up for up to five sixths of it at once never makes a live worker look
   * dead, and a worker whose event loop keeps stalling asks for up to three times as long (see
   * `takeover/lease-renewer.ts`). Default `DIRIGENT_WORKER_LEASE_MS`, else 1500 (renewed every
   * 250 ms).
   */
  leaseMs?: number;
  /** Where the runs' spans and metrics go (see `telemetry/telemetry.ts`); default none. */
  telemetry?: Telemetry | TelemetryOptions;
  /** Where the worker logs what happens to runs (default: nowhere). */
  logger?: Logger;
  /**
   * The tool worker of this process, if it runs one for the same project and Redis: a step's
   * call runs on it when it has a free slot (or one frees within its `slotWaitMs`) and no lock or
   * rate limit applies (an eager call, see `queue-dispatcher.ts`), instead of going through the
   * tools queue.
   */
  tools?: ToolWorker;
  /**
   * Told what happens to the runs this worker drives ({@link RunWorkerEvents}), as it happens.
   * Called synchronously on the worker's own path: what it throws is logged and goes no further,
   * and anything slow belongs in a promise of its own. Default: no one is told.
   */
  events?: RunEventSink;
}

/** The worker a run event comes from: its lease name, `dirigent-runs/<BullMQ worker id>`. */
interface FromWorker {
  /** The run worker's lease name (see `worker-lease.ts`), unique in the deployment. */
  worker: string;
}

/**
 * A worker began driving a new run: nothing of it was stored before. (A child run, which a step
 * of its parent starts, is driven with its parent and not told here.)
 */
export interface RunStartedEvent extends FromWorker {
  runId: string;
  /** The directive's item id (or file) as the run record names it. */
  directive: string;
  /** What started the run: `cli`, `api`, `queue`, `schedule`, `event`… */
  trigger: RunTrigger;
}

/** A run this worker drove ended. */
export interface RunEndedEvent extends FromWorker {
  runId: string;
  directive: string;
  status: 'completed' | 'failed' | 'cancelled';
  /** The run's final record: outputs, steps, and the error of a failed run. */
  record: RunRecord;
}

/**
 * This worker took over a run under way whose driver stopped without letting it go: its process
 * died, or it was paused or cut off from Redis past its lease (`lease-lapsed`, the driver named),
 * or BullMQ found the run's job stalled (`stalled`, the driver unknown). The run goes on from its
 * last stored state.
 */
export interface RunTakenOverEvent extends FromWorker {
  runId: string;
  directive: string;
  /** The lease name of the worker that drove the run before, when the store knew it. */
  previousWorker?: string;
  cause: 'lease-lapsed' | 'stalled';
}

/**
 * This worker handed a run it drove back to the queue because it is closing; another worker (or
 * this one, started again) resumes it from its stored state.
 */
export interface RunHandedBackEvent extends FromWorker {
  runId: string;
  directive: string;
}

/**
 * This worker stopped driving a run because another worker took it over (this worker's lease
 * lapsed): it writes nothing more to it.
 */
export interface RunLostEvent extends FromWorker {
  runId: string;
  directive: string;
  /** `RUN_TAKEN_OVER`, saying why. */
  error: { code: string; message: string };
}

/** The events of a run worker, by name: what each one tells. */
export interface RunWorkerEvents {
  /** A worker began driving a new run (see {@link RunStartedEvent}). */
  'run:started': RunStartedEvent;
  /** A run this worker drove completed, failed or was cancelled (see {@link RunEndedEvent}). */
  'run:ended': RunEndedEvent;
  /** This worker resumed a run whose driver died or lost it (see {@link RunTakenOverEvent}). */
  'run:taken-over': RunTakenOverEvent;
  /** This worker, closing, gave a run back to the queue (see {@link RunHandedBackEvent}). */
  'run:handed-back': RunHandedBackEvent;
  /** Another worker took over a run this worker drove (see {@link RunLostEvent}). */
  'run:lost': RunLostEvent;
}

/** Where a run worker tells its events ({@link RunWorkerOptions.events}). */
export type RunEventSink = <K extends keyof RunWorkerEvents>(
  name: K,
  event: RunWorkerEvents[K],
) => void;
