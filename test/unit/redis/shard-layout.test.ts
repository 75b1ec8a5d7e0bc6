/**
 * How a deployment's keys are laid out over shards (`redis/shards/shard-layout.ts`), how many
 * shards it has (`shard-count.ts`), and which shard a run lives on (`engine/run-affinity.ts`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { childRunId } from '../../../src/engine/child-run-id.js';
import { runAffinity } from '../../../src/engine/run-affinity.js';
import { groupRunIds } from '../../../src/redis/client/start-group-ids.js';
import { chosenShardCount, layoutFor } from '../../../src/redis/shards/shard-count.js';
import {
  hashTagOf,
  keySlot,
  ShardLayout,
  shardTag,
} from '../../../src/redis/shards/shard-layout.js';
import { thrown } from '../../support/thrown.js';

describe('the hash slot of a key', () => {
  it('is the CRC16 of the key, as Redis Cluster computes it', () => {
    // Values Redis answers to CLUSTER KEYSLOT.
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('bar')).toBe(5061);
    expect(keySlot('123456789')).toBe(12739);
  });

  it('is that of the hash tag when the key has one, and of the whole key when the tag is empty', () => {
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
    expect(hashTagOf('a:{b}:{c}')).toBe('b');
    expect(hashTagOf('a{}b')).toBeUndefined();
    expect(keySlot('a{}b')).toBe(keySlot('a{}b'));
  });
});

describe('a layout of shards', () => {
  it('keeps one shard on one Redis as it always was', () => {
    const one = ShardLayout.single('dirigent');
    expect(one.prefixes).toEqual(['dirigent']);
    expect(one.home).toBe('dirigent');
    expect(one.globalKey('lock', 'db')).toBe('dirigent:lock:db');
    expect(one.shardOf('anything')).toBe(0);
  });

  it('puts one shard on a cluster under the prefix’s hash tag, or one of its own', () => {
    expect(new ShardLayout('dirigent', 1, true).prefixes).toEqual(['{dirigent}']);
    expect(new ShardLayout('{dirigent}', 1, true).prefixes).toEqual(['{dirigent}']);
    expect(new ShardLayout('dirigent', 1, true).globalKey('lock', 'db')).toBe('dirigent:lock:{db}');
  });

  it('gives each of N shards a tag whose slot lies in its own N-th of the slots', () => {
    for (const n of [2, 3, 6, 16]) {
      const layout = new ShardLayout('dirigent', n, true);
      expect(layout.home).toBe('{dirigent}');
      layout.prefixes.forEach((prefix, i) => {
        expect(prefix).toBe(`dirigent:{${shardTag(i, n)}}`);
        expect(Math.floor((keySlot(`${prefix}:run:x`) * n) / 16384)).toBe(i);
      });
    }
  });

  it('refuses a number of shards that is not a whole number from 1 to 1024', () => {
    for (const n of [0, 1.5, 1025])
      expect(thrown(() => new ShardLayout('dirigent', n, false))).toMatchObject({
        code: 'INVALID_CONFIG',
      });
  });

  it('reads a cluster from the URL', () => {
    expect(layoutFor('redis+cluster://127.0.0.1:7000', 'd', 1).prefixes).toEqual(['{d}']);
    expect(layoutFor('redis://127.0.0.1:6379', 'd', 1).prefixes).toEqual(['d']);
  });
});

describe('the shard of a run', () => {
  const layout = new ShardLayout('dirigent', 6, false);

  it('is shared by the runs started together, and by a child with its parent', () => {
    const group = groupRunIds('0123abcd-0000-4000-8000-00000000ffff', 20);
    expect(new Set(group.map((id) => layout.shardOf(id))).size).toBe(1);
    for (const parent of [...group, 'order-42', 'anything at all'])
      expect(layout.shardOf(childRunId(parent, 'step#0.1'))).toBe(layout.shardOf(parent));
  });

  it('is the shard asked for, for an id drawn for it', () => {
    for (let shard = 0; shard < 6; shard++)
      for (let i = 0; i < 20; i++) expect(layout.shardOf(layout.newRunId(shard))).toBe(shard);
  });

  it('spreads ids of no pattern evenly', () => {
    const counts = [0, 0, 0, 0, 0, 0];
    for (let i = 0; i < 6000; i++) counts[runAffinity(`order-${i}`) % 6]!++;
    expect(Math.max(...counts) / Math.min(...counts)).toBeLessThan(1.2);
  });
});

describe('the number of shards chosen', () => {
  it('is the option, else DIRIGENT_SHARDS, else the project’s `shards`, else 1', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dirigent-shards-'));
    try {
      expect(chosenShardCount(undefined, dir, {})).toBe(1);
      mkdirSync(join(dir, '.ai', 'config'), { recursive: true });
      writeFileSync(join(dir, '.ai', 'config', 'dirigent.yaml'), 'shards: 6\n');
      expect(chosenShardCount(undefined, dir, {})).toBe(6);
      expect(chosenShardCount(undefined, dir, { DIRIGENT_SHARDS: '3' })).toBe(3);
      expect(chosenShardCount(2, dir, { DIRIGENT_SHARDS: '3' })).toBe(2);
      expect(
        thrown(() => chosenShardCount(undefined, dir, { DIRIGENT_SHARDS: 'x' })),
      ).toMatchObject({ code: 'INVALID_CONFIG' });
      writeFileSync(join(dir, '.ai', 'config', 'dirigent.yaml'), 'shards: many\n');
      const err = thrown(() => chosenShardCount(undefined, dir, {}));
      expect(err).toMatchObject({ code: 'INVALID_CONFIG' });
      expect(err.message).toContain('"shards" must be a whole number');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
