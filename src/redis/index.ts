/**
 * `dirigent/distributed`: runs on BullMQ and Redis. Kept apart from the main entry point, so that
 * an application that only embeds the engine never loads BullMQ.
 *
 * A program that serves a deployment from its own process makes a {@link DirigentWorker} (what
 * `dirigent worker` runs) and listens to its events; `RunWorker` and `ToolWorker` are its parts,
 * for a program that composes them itself.
 */
export { DirigentWorker } from '../worker/dirigent-worker.js';
export {
  WORKER_QUEUES,
  type CompiledWorkerOptions,
  type DirigentWorkerOptions,
  type WorkerQueue,
} from '../worker/worker-options.js';
export type {
  WorkerDrainingEvent,
  WorkerErrorEvent,
  WorkerEventListener,
  WorkerEvents,
  WorkerEventSource,
  WorkerReadyEvent,
} from '../worker/worker-events.js';
export {
  RunWorker,
  type RunEndedEvent,
  type RunHandedBackEvent,
  type RunLostEvent,
  type RunStartedEvent,
  type RunTakenOverEvent,
  type RunWorkerEvents,
  type RunWorkerOptions,
} from './run-worker/run-worker.js';
export {
  ToolWorker,
  type ToolFailedEvent,
  type ToolWorkerEvents,
  type ToolWorkerOptions,
} from './tool-worker/tool-worker.js';
export { RunsClient } from './client/runs-client.js';
export {
  RedisRunStore,
  type RunListFilter,
  type VersionedRun,
} from './run-store/redis-run-store.js';
export { connectRedis, pingRedis, redisUrl } from './redis-connection.js';
export { DEFAULT_PREFIX, QueueName } from './queue-names.js';
export { workerTiming, type WorkerTiming } from './worker-timing.js';
export { createLogger } from '../telemetry/create-logger.js';
export type { Logger } from '../telemetry/logger.js';
