import type { RedisClient } from '../redis/redis-client.js';
import type { Logger } from '../telemetry/logger.js';
import type { ToolCall } from '../tools/tool-call.js';

/** What the loops of bootstrap tools share: a worker's Redis, dispatcher, logger and timing. */
export interface BootstrapContext {
  redis: RedisClient;
  /** The deployment's key prefix. */
  prefix: string;
  /** The project served: tools resolve and run in it. */
  projectDir: string;
  /** Runs a tool as a tool job would (the project's `ItemDispatcher`). */
  dispatch(call: ToolCall): Promise<unknown>;
  logger: Logger;
  /** TTL of a claim or lease, renewed every third of it while its holder lives. */
  leaseMs: number;
  /** How often a worker looks again at a claim or lease another worker holds. */
  pollMs: number;
  /** This worker, as records and logs name it: `host:pid`. */
  worker: string;
  /** Aborted when the worker drains: every loop ends and every tool is stopped. */
  stopping: AbortSignal;
}
