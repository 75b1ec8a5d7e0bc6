/**
 * The Redis side of `Dirigent.open`, in a module of its own so that it is loaded only when used:
 * an embedded run never loads BullMQ or ioredis.
 */
import type { DirectiveLoader } from '../../engine/directive-loader.js';
import { DEFAULT_PREFIX } from '../queue-names.js';
import { connectRedis, pingRedis, printableRedisUrl } from '../redis-connection.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import { RedisIdempotency } from './redis-idempotency.js';
import { RedisBulkLedger } from './redis-bulk-ledger.js';
import { RedisBackend } from './redis-backend.js';
import { ShardedBackend } from './sharded-backend.js';
import { agreeOnShardCount, chosenShardCount, layoutFor } from '../shards/shard-count.js';
import { ScheduleBook } from '../triggers/schedule-book.js';
import { redisUnavailable } from '../../errors/deployment-errors.js';

/** What a project opened on a Redis deployment runs on. */
export interface RedisParts {
  backend: RedisBackend | ShardedBackend;
  claims: RedisIdempotency;
  ledger: RedisBulkLedger;
  book: ScheduleBook;
}

/**
 * Connects to the deployment at `url` (key prefix `prefix`, default `$DIRIGENT_PREFIX` or
 * `dirigent`; `shards`, default `DIRIGENT_SHARDS`, the project's `shards` or 1):
 * `REDIS_UNAVAILABLE` when it does not answer within 2 s, `INVALID_CONFIG` when the deployment
 * has another number of shards.
 */
export async function openRedis(
  url: string,
  options: { prefix?: string | undefined; shards?: number | undefined },
  loader: DirectiveLoader,
  telemetry: Telemetry | undefined,
): Promise<RedisParts> {
  const prefix = options.prefix ?? (process.env.DIRIGENT_PREFIX || DEFAULT_PREFIX);
  const layout = layoutFor(url, prefix, chosenShardCount(options.shards, loader.projectDir));
  if (!(await pingRedis(url, 2000))) throw redisUnavailable(printableRedisUrl(url), 'client');
  const redis = connectRedis(url);
  try {
    await agreeOnShardCount(redis, layout);
  } catch (err) {
    redis.disconnect();
    throw err;
  }
  const home = layout.home;
  return {
    backend:
      layout.count === 1
        ? new RedisBackend(redis, home, loader, telemetry)
        : new ShardedBackend(redis, layout, loader, telemetry),
    claims: new RedisIdempotency(redis, layout),
    ledger: new RedisBulkLedger(redis, home),
    book: new ScheduleBook(redis, home),
  };
}
