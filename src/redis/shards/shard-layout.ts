/**
 * How a deployment's keys are laid out over Redis: in one key space, or spread over shards.
 *
 * A shard is a set of BullMQ queues (runs, tools) and a partition of the run store, every key of
 * which carries the shard's hash tag (`<prefix>:{<tag>}:…`), so that each of a shard's scripts
 * and transactions touches one hash slot of a Redis Cluster, and the shards' slots spread over its
 * nodes. A run's shard is its affinity (`engine/run-affinity.ts`) modulo the number of shards: a
 * run, its children and the runs started in one job with it live on one shard.
 *
 * What the whole deployment shares sits beside the shards, under the *home* prefix: the pauses,
 * the trigger queue and its schedules, bulk action ledgers, idempotency claims and the record of
 * the number of shards. Locks, rate limits and run concurrency keys are global too, but each has
 * a slot of its own (its name is its hash tag), so that no one slot takes every step's writes.
 *
 * One shard on one Redis keeps the keys as they always were: `<prefix>:…`. One shard on a cluster
 * puts everything under the tag of the prefix (`{dirigent}:…`) unless the prefix has one already.
 */
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { randomUUID } from 'node:crypto';
import { affinityDigits, runAffinity } from '../../engine/run-affinity.js';
import type { GlobalKeys } from '../../locks/key-space.js';
import { MAX_SHARDS } from '../../policy/project-policy.js';

export { MAX_SHARDS };

/** The number of hash slots of a Redis Cluster. */
const SLOTS = 16384;

/** A deployment's layout over Redis (see the module comment). */
export class ShardLayout implements GlobalKeys {
  /** Each shard's key prefix, by shard number. */
  readonly prefixes: readonly string[];
  /** The prefix of what the whole deployment shares. */
  readonly home: string;
  /** Whether every key carries a hash tag (a cluster, or more than one shard). */
  readonly tagged: boolean;
  private readonly bare: string;

  /**
   * The layout of `count` shards under `prefix`; `cluster` when the Redis is a Redis Cluster.
   * `INVALID_CONFIG` for a count that is not a whole number from 1 to {@link MAX_SHARDS}.
   */
  constructor(
    readonly prefix: string,
    readonly count: number,
    cluster: boolean,
  ) {
    if (!Number.isInteger(count) || count < 1 || count > MAX_SHARDS)
      throw DirigentError.fatal(
        ErrorCode.INVALID_CONFIG,
        `The number of shards is ${count}: it must be a whole number from 1 to ${MAX_SHARDS}.`,
        {
          hint: 'Set DIRIGENT_SHARDS (or `shards` in .ai/config/dirigent.yaml), or unset it for 1.',
        },
      );
    this.bare = prefix.replace(/[{}]/g, '');
    this.tagged = cluster || count > 1;
    if (count === 1) {
      const only = !cluster || hashTagOf(prefix) !== undefined ? prefix : `{${prefix}}`;
      this.prefixes = [only];
      this.home = only;
    } else {
      this.prefixes = Array.from(
        { length: count },
        (_, i) => `${this.bare}:{${shardTag(i, count)}}`,
      );
      this.home = `{${this.bare}}`;
    }
  }

  /** The layout of a deployment of one shard under `prefix`, on one Redis: keys as they always were. */
  static single(prefix: string): ShardLayout {
    return new ShardLayout(prefix, 1, false);
  }

  /** A new random run id (a UUID) whose affinity falls on `shard` (see `engine/run-affinity.ts`). */
  newRunId(shard: number): string {
    const id = randomUUID();
    if (this.count === 1) return id;
    const drawn = parseInt(id.slice(-8), 16);
    let affinity = drawn - (drawn % this.count) + shard;
    if (affinity > 0xffffffff) affinity -= this.count;
    return id.slice(0, -8) + affinityDigits(affinity);
  }

  /** The shard of a run. */
  shardOf(runId: string): number {
    return this.count === 1 ? 0 : runAffinity(runId) % this.count;
  }

  /** The key prefix of a run's shard. */
  prefixOf(runId: string): string {
    return this.prefixes[this.shardOf(runId)]!;
  }

  /**
   * The key of a global thing of `kind` named `name` (a lock, a rate limit, a concurrency key):
   * `<prefix>:<kind>:<name>` as ever in an untagged layout, else with the name as its own hash
   * tag, so that each has its own slot.
   */
  globalKey(kind: string, name: string): string {
    return this.tagged ? `${this.bare}:${kind}:{${name}}` : `${this.prefix}:${kind}:${name}`;
  }
}

/**
 * The hash tag of shard `i` of `count`: the first of `<i>.<k>` (k = 0, 1, …) whose slot lies in
 * the `i`-th of `count` equal ranges of slots. A cluster made by `redis-cli --cluster create`
 * gives its primaries equal ranges in order, so `count` shards, a multiple of the primaries,
 * spread evenly over them.
 */
export function shardTag(i: number, count: number): string {
  const from = Math.floor((i * SLOTS) / count);
  const to = Math.floor(((i + 1) * SLOTS) / count);
  for (let k = 0; ; k++) {
    const tag = `${i}.${k}`;
    const slot = keySlot(tag);
    if (slot >= from && slot < to) return tag;
  }
}

/** The hash tag of `key` as a Redis Cluster reads it, if it has one. */
export function hashTagOf(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open < 0) return undefined;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

/** The hash slot of `key` in a Redis Cluster (CRC16/XMODEM of its hash tag, or of the key). */
export function keySlot(key: string): number {
  const bytes = Buffer.from(hashTagOf(key) ?? key, 'utf8');
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % SLOTS;
}
