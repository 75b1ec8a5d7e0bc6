/**
 * Keyed concurrency: at most `limit` holders of the same key at once, across every process that
 * shares the Redis. Built on redis-semaphore's `Semaphore` (a sorted set of holder ids scored by
 * the time each last renewed its lease; expired holders are pruned by each acquire).
 *
 * Non-blocking: {@link tryAcquire} makes exactly one attempt, so a job that finds every slot
 * taken is deferred by its caller and never parks a worker slot while it waits.
 */
import type { KeySpace } from './key-space.js';
import type { RedisClient } from '../redis/redis-client.js';
import { Semaphore } from 'redis-semaphore';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { lockLost, lockUnavailable } from '../errors/deployment-errors.js';

/** A held slot of a keyed semaphore. */
export interface LockSlot {
  /** The rendered key the slot belongs to. */
  readonly key: string;
  /**
   * Aborted, with a retryable `LOCK_LOST` {@link DirigentError} as its reason, when the lease
   * could not be renewed for a whole `leaseMs` (Redis unreachable, or the holder's entry expired
   * meanwhile): another job may hold the slot now, so the work should stop.
   */
  readonly signal: AbortSignal;
  /**
   * Stops renewing the lease and frees the slot. Idempotent. Rejects with a retryable
   * `LOCK_UNAVAILABLE` when Redis does not answer; the slot then frees itself after `leaseMs`.
   */
  release(): Promise<void>;
}

/**
 * The Redis key of the sorted set behind the semaphore `key` in `space`: a deployment's layout names it
 * (`redis/shards/shard-layout.ts`: its own hash slot on a cluster), or it is `<prefix>:lock:<key>`
 * under a prefix (a trailing `:` on the prefix is not doubled).
 */
export function lockRedisKey(space: KeySpace, key: string): string {
  if (typeof space !== 'string') return space.globalKey('lock', key);
  return `${space.endsWith(':') ? space : `${space}:`}lock:${key}`;
}

/**
 * Takes one of the `limit` slots of `key` if one is free, in one attempt, and returns it; returns
 * `undefined` when all `limit` slots are held.
 *
 * While the slot is held its lease is renewed every third of `leaseMs`; when the holder dies
 * (process killed, connection gone) the renewals stop and the slot frees itself `leaseMs` after
 * the last one. Every declarer of the same key must use the same `limit` and `leaseMs`: an
 * acquire prunes the holders older than its own lease, and compares the count with its own limit.
 * Holders' timestamps come from their processes' clocks, so the machines' clocks must agree to
 * well within `leaseMs`.
 *
 * Throws a retryable `LOCK_UNAVAILABLE` {@link DirigentError} when Redis does not answer.
 */
export async function tryAcquire(
  redis: RedisClient,
  space: KeySpace,
  key: string,
  limit: number,
  leaseMs: number,
): Promise<LockSlot | undefined> {
  checkArguments(key, limit, leaseMs);
  const controller = new AbortController();
  const semaphore = new LeasedSemaphore(redis, lockRedisKey(space, key), limit, leaseMs, () =>
    controller.abort(
      lockLost(`the concurrency lock '${key}'`, `its lease of ${leaseMs} ms could not be renewed`, {
        key,
        leaseMs,
      }),
    ),
  );
  let acquired: boolean;
  try {
    acquired = await semaphore.tryAcquire();
  } catch (err) {
    throw lockUnavailable(`Could not ask Redis for the concurrency lock '${key}'`, key, err);
  }
  if (!acquired) return undefined;

  let released: Promise<void> | undefined;
  return {
    key,
    signal: controller.signal,
    release() {
      released ??= semaphore.release().catch((err: unknown) => {
        throw lockUnavailable(
          `Could not release the concurrency lock '${key}' (it frees itself after ${leaseMs} ms)`,
          key,
          err,
        );
      });
      return released;
    },
  };
}

/**
 * How many hold a slot of `key` now (holders whose lease has not expired), for metrics and
 * tests. `leaseMs` must be the key's lease.
 */
export async function countHolders(
  redis: RedisClient,
  space: KeySpace,
  key: string,
  leaseMs: number,
): Promise<number> {
  return redis.zcount(lockRedisKey(space, key), `(${Date.now() - leaseMs}`, '+inf');
}

/**
 * redis-semaphore's `Semaphore`, with three changes:
 * - its Redis key is exactly the one given (the library would prepend `semaphore:`), so that
 *   every key Dirigent writes lives under its prefix;
 * - one acquire attempt, without waiting between attempts;
 * - a renewal that fails because Redis does not answer is not fatal (the library would leave a
 *   rejected promise unhandled in its timer, which ends a Node process): the lease counts as kept
 *   until `leaseMs` has passed since the last successful renewal, and as lost after that.
 */
class LeasedSemaphore extends Semaphore {
  private renewedAt = Date.now();

  constructor(
    redis: RedisClient,
    redisKey: string,
    limit: number,
    private readonly leaseMs: number,
    onLost: () => void,
  ) {
    super(redis, redisKey, limit, {
      lockTimeout: leaseMs,
      refreshInterval: Math.max(1, Math.floor(leaseMs / 3)),
      acquireAttemptsLimit: 1,
      acquireTimeout: leaseMs,
      retryInterval: 0,
      onLockLost: onLost,
    });
    this._key = redisKey;
  }

  protected override async _acquire(abortSignal?: AbortSignal): Promise<boolean> {
    const acquired = await super._acquire(abortSignal);
    if (acquired) this.renewedAt = Date.now();
    return acquired;
  }

  protected override async _refresh(): Promise<boolean> {
    try {
      const renewed = await super._refresh();
      if (renewed) this.renewedAt = Date.now();
      return renewed;
    } catch {
      return Date.now() - this.renewedAt < this.leaseMs;
    }
  }
}

function checkArguments(key: string, limit: number, leaseMs: number): void {
  const wrong =
    typeof key !== 'string' || key === ''
      ? `key must be a non-empty string, not ${JSON.stringify(key)}`
      : !Number.isSafeInteger(limit) || limit < 1
        ? `limit must be an integer of at least 1, not ${limit}`
        : !Number.isSafeInteger(leaseMs) || leaseMs < 3
          ? `leaseMs must be an integer of at least 3, not ${leaseMs}`
          : undefined;
  if (wrong !== undefined)
    throw DirigentError.fatal(ErrorCode.INTERNAL, `tryAcquire: ${wrong}.`, {
      details: { key, limit, leaseMs },
    });
}
