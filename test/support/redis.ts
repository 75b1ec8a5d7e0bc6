import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../../src/redis/redis-client.js';
import { afterAll, afterEach, beforeAll, beforeEach, inject } from 'vitest';
import { parseRedisUrl } from '../../src/redis/redis-endpoint.js';
import { connectRedis, pingRedis, redisDownMessage } from '../../src/redis/redis-connection.js';
import { deleteKeys } from './redis-keys.js';

export { deleteKeys } from './redis-keys.js';

/**
 * The Redis the integration tests use: the one their project's setup started (the `cluster`
 * project's Redis Cluster, see `cluster-setup.ts`), else `REDIS_URL`, else the local default.
 */
export const TEST_REDIS_URL =
  inject('redisUrl') || process.env.REDIS_URL || 'redis://127.0.0.1:6379';

/** Whether the tests run on a Redis Cluster. */
export const ON_CLUSTER = parseRedisUrl(TEST_REDIS_URL).kind === 'cluster';

/** A real Redis for the tests of one file; see {@link redisForTest}. */
export interface TestRedis {
  readonly url: string;
  /** The file's shared connection. */
  readonly redis: RedisClient;
  /**
   * A key prefix of the current test alone, whose keys are deleted after the test. On a cluster it
   * is a hash tag (`{dirigent-test:…}`), so that parts made with it directly keep to one slot.
   */
  readonly prefix: string;
  /** One more connection (a second process, say), closed after the file's tests. */
  connect(): RedisClient;
}

/**
 * Registers hooks that connect to the real Redis at {@link TEST_REDIS_URL}, hand each test a
 * unique key prefix and delete that prefix's keys afterwards. Call it at the top of a test file or
 * `describe`. A Redis that does not answer fails every test with "start redis-server" (under CI
 * and elsewhere alike): the integration tests are never skipped silently.
 */
export function redisForTest(): TestRedis {
  let shared: RedisClient | undefined;
  let down: Error | undefined;
  let prefix: string | undefined;
  const extra: RedisClient[] = [];

  beforeAll(async () => {
    if (await pingRedis(TEST_REDIS_URL, 2000)) shared = connectRedis(TEST_REDIS_URL);
    else down = new Error(`${redisDownMessage(TEST_REDIS_URL)} The integration tests need it.`);
  });
  beforeEach(() => {
    if (down) throw down;
    const id = `dirigent-test:${randomUUID()}`;
    prefix = ON_CLUSTER ? `{${id}}` : id;
  });
  afterEach(async () => {
    // Every key of the test, whatever layout its deployment had (shards carry tags of their own).
    if (shared && prefix) await deleteKeys(shared, `*${prefix.replace(/[{}]/g, '')}*`);
    prefix = undefined;
  });
  afterAll(async () => {
    await Promise.all([...extra, ...(shared ? [shared] : [])].map((c) => c.quit()));
  });

  return {
    url: TEST_REDIS_URL,
    get redis(): RedisClient {
      if (!shared) throw down ?? new Error('redisForTest(): use the connection inside a test.');
      return shared;
    },
    get prefix(): string {
      if (!prefix) throw new Error('redisForTest(): the prefix exists only inside a test.');
      return prefix;
    },
    connect(): RedisClient {
      if (down) throw down;
      const client = connectRedis(TEST_REDIS_URL);
      extra.push(client);
      return client;
    },
  };
}
