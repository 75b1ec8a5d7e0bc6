/**
 * Idempotency claims on a Redis deployment: one key each, `SET NX` with the window as its expiry
 * (see `operations/idempotency.ts` for what a claim promises), at the global key `idempotency` of
 * the key's hash: a slot of its own on a cluster (`shards/shard-layout.ts`).
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import type { RedisClient } from '../redis-client.js';
import type { ShardLayout } from '../shards/shard-layout.js';
import {
  idempotencyConflict,
  runIdForKey,
  type Claim,
  type IdempotencyStore,
} from '../../operations/idempotency.js';
import { processAlive } from '../../runtimes/process-alive.js';

/** This machine, as claims name their maker's. */
const HOST = hostname();

/** How long a claim's maker has to start its run before others take it for dead (Redis). */
const START_GRACE_MS = 30_000;

/** Claims in Redis: one key each, `SET NX` with the window as its expiry. */
export class RedisIdempotency implements IdempotencyStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly layout: ShardLayout,
  ) {}

  /** Whether `key` is claimed; its window is the claim's expiry in Redis. */
  async held(key: string): Promise<boolean> {
    return (await this.redis.exists(this.slotOf(key))) === 1;
  }

  private slotOf(key: string): string {
    return this.layout.globalKey('idempotency', createHash('sha256').update(key).digest('hex'));
  }

  async claim(key: string, fingerprint: string, windowMs: number): Promise<Claim> {
    const runId = runIdForKey(this.layout.prefix, key);
    const slot = this.slotOf(key);
    const value = JSON.stringify({
      runId,
      fingerprint,
      at: Date.now(),
      host: HOST,
      pid: process.pid,
    });
    const set = await this.redis.set(slot, value, 'PX', windowMs, 'NX');
    if (set === 'OK') return { runId, created: true };
    const held = await this.redis.get(slot);
    // Expired between the two commands: claim it again.
    if (held === null) return this.claim(key, fingerprint, windowMs);
    const claim = JSON.parse(held) as {
      fingerprint: string;
      at?: number;
      host?: string;
      pid?: number;
    };
    if (claim.fingerprint !== fingerprint) throw idempotencyConflict(key);
    // A claimer on this machine whose process is gone is not starting anything any more.
    const gone = claim.host === HOST && claim.pid !== process.pid && !processAlive(claim.pid);
    return {
      runId,
      created: false,
      pending: !gone && Date.now() - (claim.at ?? 0) < START_GRACE_MS,
    };
  }
}
