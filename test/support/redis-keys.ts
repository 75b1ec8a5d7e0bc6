import type { RedisClient } from '../../src/redis/redis-client.js';

/** Deletes every key matching `pattern` (SCAN, then UNLINK). */
export async function deleteKeys(redis: RedisClient, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    if (keys.length > 0) await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
}
