/**
 * Connecting to the Redis that the distributed engine (run store, BullMQ queues) shares.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { parseRedisUrl } from './redis-endpoint.js';
import type { RedisClient } from './redis-client.js';

export { redisUrl } from './redis-url.js';

/** Options of {@link connectRedis}: ioredis options, except the two that BullMQ and the store fix. */
export type ConnectRedisOptions = Omit<RedisOptions, 'maxRetriesPerRequest' | 'lazyConnect'>;

/**
 * An ioredis client for `url`, connecting at once. `maxRetriesPerRequest` is `null` (BullMQ's
 * workers require it: a command waits for the connection to come back rather than failing), so a
 * Redis that is down makes commands wait, not fail: check with {@link pingRedis} first where a
 * clear error matters.
 */
export function connectRedis(url: string, options: ConnectRedisOptions = {}): RedisClient {
  return quiet(redisClient(url, { ...options, maxRetriesPerRequest: null, lazyConnect: false }));
}

/**
 * An ioredis client for any form of Redis URL (see `redis-endpoint.ts`): one Redis; the primary
 * of a Sentinel deployment, found through its sentinels and followed through a failover; or a
 * Redis Cluster, reached through any of its nodes and followed as its slots move. `INVALID_CONFIG`
 * for a malformed URL.
 */
function redisClient(url: string, options: RedisOptions): RedisClient {
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
    case 'cluster': {
      const { lazyConnect, enableOfflineQueue, retryStrategy, ...rest } = options;
      return new Cluster(endpoint.nodes, {
        redisOptions: { ...endpoint.options, ...rest },
        ...(lazyConnect !== undefined && { lazyConnect }),
        ...(enableOfflineQueue !== undefined && { enableOfflineQueue }),
        // A client that must not retry (a ping) gives up on the cluster as on one node.
        ...(retryStrategy !== undefined && {
          clusterRetryStrategy: (times: number) => retryStrategy?.(times) ?? null,
        }),
        ...(endpoint.options.tls !== undefined && {
          dnsLookup: (address: string, done: (err: null, a: string) => void) => done(null, address),
        }),
      });
    }
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

/**
 * `emitter` (a connection, a BullMQ queue) with its connection errors heard and let go. They are
 * not events to act on: commands wait for the connection to come back (see {@link connectRedis}),
 * and a failure that matters surfaces where a command fails. Unheard, ioredis prints each one as
 * unhandled and BullMQ's queues print them again: a failover would fill standard error.
 */
export function quiet<T extends { on(event: 'error', listener: (err: Error) => void): unknown }>(
  emitter: T,
): T {
  emitter.on('error', () => undefined);
  return emitter;
}

/** A new connection like `redis` (see `duplicate()`), its connection errors heard ({@link quiet}). */
export function duplicateOf(redis: RedisClient): RedisClient {
  return quiet(redis.duplicate());
}
