/**
 * What holds on a Redis Cluster alone (the `cluster` test project's, three primaries on loopback):
 * a deployment of shards puts each shard on its own part of the slots, so that every primary
 * holds runs and takes their commands; a deployment of one shard keeps to one slot.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { Dirigent } from '../../src/operations/dirigent.js';
import { DirigentWorker } from '../../src/worker/dirigent-worker.js';
import { keySlot } from '../../src/redis/shards/shard-layout.js';
import { layoutFor } from '../../src/redis/shards/shard-count.js';
import { SILENT_LOGGER } from '../../src/telemetry/logger.js';
import { writeDirective } from '../support/directive-file.js';
import { ON_CLUSTER, redisForTest } from '../support/redis.js';

const redis = redisForTest();
let closers: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
});

async function deployment(shards: number): Promise<Dirigent> {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-cluster-'));
  closers.push(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, '.ai', 'directives'), { recursive: true });
  writeDirective(
    join(dir, '.ai', 'directives'),
    'hello',
    `<inputs><input name="who" type="string" required="true"/></inputs>
    <process><step name="greet"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo hello {input:who}"/></execute></step></process>
    <outputs><output name="said" expr="$trim(steps.greet.result.stdout)"/></outputs>`,
  );
  const options = { redis: redis.url, prefix: redis.prefix, project: dir, shards };
  const worker = await DirigentWorker.start({ ...options, logger: SILENT_LOGGER });
  closers.push(() => worker.close());
  const dirigent = await Dirigent.open(options);
  closers.push(() => dirigent.close());
  return dirigent;
}

/** How many of the test's run hashes each primary holds. */
async function runsByNode(): Promise<number[]> {
  const nodes = (redis.redis as unknown as { nodes(role: string): Redis[] }).nodes('master');
  const bare = redis.prefix.replace(/[{}]/g, '');
  return Promise.all(
    nodes.map(async (node) => {
      let count = 0;
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `*${bare}*:run:*`, 'COUNT', 1000);
        count += keys.filter((k) => /:run:[0-9a-f-]{36}$/.test(k)).length;
        cursor = next;
      } while (cursor !== '0');
      return count;
    }),
  );
}

describe('a deployment on a Redis Cluster', { timeout: 60_000 }, () => {
  it('is the tests’ Redis here', () => {
    expect(ON_CLUSTER).toBe(true);
  });

  it('puts each of 3 shards on a primary of its own, so that every primary holds runs', async () => {
    const dirigent = await deployment(3);
    const handles = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        dirigent.start({ directive: 'hello', inputs: { who: `n${i}` } }),
      ),
    );
    expect(await Promise.all(handles.map((h) => h.result()))).toEqual(
      Array.from({ length: 24 }, (_, i) => ({ said: `hello n${i}` })),
    );
    const held = await runsByNode();
    expect(held).toHaveLength(3);
    expect(held.every((n) => n > 0)).toBe(true);
    expect(held.reduce((a, b) => a + b, 0)).toBe(24);
    // The shards' slots lie in the thirds of the slot space the three primaries serve.
    const slots = layoutFor(redis.url, redis.prefix, 3).prefixes.map((p) => keySlot(`${p}:x`));
    expect(slots.map((s) => Math.floor((s * 3) / 16384))).toEqual([0, 1, 2]);
  });

  it('keeps a deployment of one shard to one slot, on one primary', async () => {
    const dirigent = await deployment(1);
    const handles = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        dirigent.start({ directive: 'hello', inputs: { who: `n${i}` } }),
      ),
    );
    await Promise.all(handles.map((h) => h.result()));
    const held = await runsByNode();
    expect(held.filter((n) => n > 0)).toEqual([6]);
  });
});
