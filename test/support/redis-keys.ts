import type { Redis } from 'ioredis';
import type { RedisClient } from '../../src/redis/redis-client.js';

/** Deletes every key matching `pattern` (SCAN, then UNLINK), on every primary of a cluster. */
export async function deleteKeys(redis: RedisClient, pattern: string): Promise<void> {
  const nodes: Redis[] = 'nodes' in redis ? redis.nodes('master') : [redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      // One key at a time: a cluster refuses an UNLINK of keys in several slots.
      await Promise.all(keys.map((key) => node.unlink(key)));
      cursor = next;
    } while (cursor !== '0');
  }
}
