/**
 * Connecting to the Redis that the distributed engine (run store, BullMQ queues) shares.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { parseRedisUrl } from './redis-endpoint.js';

export { redisUrl } from './redis-url.js';

/** Options of {@link connectRedis}: ioredis options, except the two that BullMQ and the store fix. */
export type ConnectRedisOptions = Omit<RedisOptions, 'maxRetriesPerRequest' | 'lazyConnect'>;

/**
 * An ioredis client for `url`, connecting at once. `maxRetriesPerRequest` is `null` (BullMQ's
 * workers require it: a command waits for the connection to come back rather than failing), so a
 * Redis that is down makes commands wait, not fail: check with {@link pingRedis} first where a
 * clear error matters.
 */
export function connectRedis(url: string, options: ConnectRedisOptions = {}): Redis {
  return redisClient(url, { ...options, maxRetriesPerRequest: null, lazyConnect: false });
}

/**
 * An ioredis client for any form of Redis URL (see `redis-endpoint.ts`): one Redis, or the
 * primary of a Sentinel deployment, found through its sentinels and followed through a failover.
 * `INVALID_CONFIG` for a malformed URL, and for a Redis Cluster, which this version does not run on.
 */
function redisClient(url: string, options: RedisOptions): Redis {
  const endpoint = parseRedisUrl(url);
  switch (endpoint.kind) {
    case 'single':
      return new Redis(url, options);
    case 'sentinel':
      return new Redis({
        ...endpoint.options,
        ...options,
        sentinels: endpoint.sentinels,
        name: endpoint.name,
      });
    case 'cluster':
      throw DirigentError.fatal(
        ErrorCode.INVALID_CONFIG,
        `${printableRedisUrl(url)} names a Redis Cluster, which this version of Dirigent does not run on yet.`,
        { hint: 'Use one Redis (redis://…) or a Sentinel deployment (redis+sentinel://…).' },
      );
  }
}

/**
 * Whether a Redis answers `PING` at `url` within `timeoutMs`. Never retries: it opens its own
 * short-lived connection and always closes it. Throws only `INVALID_CONFIG`, for a URL no Redis
 * could be reached by (see {@link connectRedis}).
 */
export async function pingRedis(url: string, timeoutMs = 1000): Promise<boolean> {
  const client = redisClient(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    sentinelRetryStrategy: () => null,
  });
  client.on('error', () => {}); // reported through the result, not as an unhandled 'error' event
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const ping = (async () => {
    await client.connect();
    return (await client.ping()) === 'PONG';
  })().catch(() => false);
  try {
    return await Promise.race([ping, timeout]);
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}

/**
 * `url` fit to print: its password, if any, is masked.
 */
export function printableRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/** The message for a Redis that does not answer, with what to do about it. */
export function redisDownMessage(url: string): string {
  return `Redis at ${printableRedisUrl(url)} does not answer; start redis-server or set REDIS_URL.`;
}
