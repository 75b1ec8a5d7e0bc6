/**
 * `dirigent/distributed`: runs on BullMQ and Redis. Kept apart from the main entry point, so that
 * an application that only embeds the engine never loads BullMQ.
 */
export { RunWorker, type RunWorkerOptions } from './run-worker/run-worker.js';
export { ToolWorker, type ToolWorkerOptions } from './tool-worker/tool-worker.js';
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
