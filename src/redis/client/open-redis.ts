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
import { ScheduleBook } from '../triggers/schedule-book.js';
import { redisUnavailable } from '../../errors/deployment-errors.js';

/** What a project opened on a Redis deployment runs on. */
export interface RedisParts {
  backend: RedisBackend;
  claims: RedisIdempotency;
  ledger: RedisBulkLedger;
  book: ScheduleBook;
}

/**
 * Connects to the deployment at `url` (key prefix `prefix`, default `$DIRIGENT_PREFIX` or
 * `dirigent`): `REDIS_UNAVAILABLE` when it does not answer within 2 s.
 */
export async function openRedis(
  url: string,
  prefix: string | undefined,
  loader: DirectiveLoader,
  telemetry: Telemetry | undefined,
): Promise<RedisParts> {
  if (!(await pingRedis(url, 2000))) throw redisUnavailable(printableRedisUrl(url), 'client');
  const redis = connectRedis(url);
  const keyPrefix = prefix ?? (process.env.DIRIGENT_PREFIX || DEFAULT_PREFIX);
  return {
    backend: new RedisBackend(redis, keyPrefix, loader, telemetry),
    claims: new RedisIdempotency(redis, keyPrefix),
    ledger: new RedisBulkLedger(redis, keyPrefix),
    book: new ScheduleBook(redis, keyPrefix),
  };
}
