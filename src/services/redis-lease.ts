/**
 * A lease on one Redis key: `SET key value NX PX leaseMs` takes it, a timer renews it every third
 * of `leaseMs` while its holder lives, and a compare-and-delete (or compare-and-set) ends it. When
 * the holder dies the renewals stop and the key expires `leaseMs` after the last one, so another
 * process can take it. Every change is conditional on the key still holding this lease's value, so
 * a holder that lost its lease never disturbs the next one.
 */
import type { RedisClient } from '../redis/redis-client.js';
import { lockLost } from '../errors/deployment-errors.js';

const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;
const SETTLE = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 end return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** How long an ending write (settle, release) may wait for Redis before it is given up. */
const END_TIMEOUT_MS = 5_000;

/** A held lease; see the module comment. */
export class RedisLease {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  /** When the last successful renewal was sent (the lease runs at least `leaseMs` from then). */
  private renewedAt: number;
  private renewing = false;
  private ended = false;

  /**
   * Aborted, with a retryable `LOCK_LOST` {@link DirigentError} as its reason, when the key no
   * longer holds this lease (it expired and was taken) or no renewal succeeded for `leaseMs`
   * (Redis unreachable): another process may hold it now, so the work it guards should stop.
   */
  readonly lost: AbortSignal = this.controller.signal;

  private constructor(
    private readonly redis: RedisClient,
    readonly key: string,
    private readonly value: string,
    private readonly leaseMs: number,
    acquiredAt: number,
  ) {
    this.renewedAt = acquiredAt;
    this.timer = setInterval(() => this.renew(), Math.max(100, Math.floor(leaseMs / 3)));
    this.timer.unref();
  }

  /**
   * Takes the lease on `key`, storing `value` there, if no one holds it; `undefined` otherwise.
   * `value` must be unique to this holder (it carries a random claim id): it is what every later
   * change compares.
   */
  static async tryAcquire(
    redis: RedisClient,
    key: string,
    value: string,
    leaseMs: number,
  ): Promise<RedisLease | undefined> {
    const at = Date.now();
    const ok = await redis.set(key, value, 'PX', leaseMs, 'NX');
    return ok === 'OK' ? new RedisLease(redis, key, value, leaseMs, at) : undefined;
  }

  /**
   * Ends the lease by replacing its value with `final`, kept without expiry (a `once` tool's
   * outcome). False when the lease was lost meanwhile (nothing is written then).
   */
  async settle(final: string): Promise<boolean> {
    if (!this.end()) return false;
    const n = await this.ending(this.redis.eval(SETTLE, 1, this.key, this.value, final));
    return n === 1;
  }

  /**
   * Ends the lease and deletes the key if it still holds this lease. Idempotent; never rejects
   * (a key that could not be deleted expires by itself after `leaseMs`).
   */
  async release(): Promise<void> {
    if (!this.end()) return;
    await this.ending(this.redis.eval(RELEASE, 1, this.key, this.value)).catch(() => {
      // Not deleted (Redis away): the key expires by itself after leaseMs.
    });
  }

  /** Stops the renewals; false when the lease had already ended. */
  private end(): boolean {
    clearInterval(this.timer);
    if (this.ended) return false;
    this.ended = true;
    return true;
  }

  private renew(): void {
    if (this.ended) return;
    if (Date.now() - this.renewedAt >= this.leaseMs) {
      this.lose(`its lease of ${this.leaseMs} ms could not be renewed in time`);
      return;
    }
    if (this.renewing) return;
    this.renewing = true;
    const sent = Date.now();
    this.redis
      .eval(RENEW, 1, this.key, this.value, this.leaseMs)
      .then((n) => {
        if (n === 1) this.renewedAt = sent;
        else this.lose('it expired and another holder took it');
      })
      .catch(() => {
        // Redis unreachable: the lease is lost (above) once leaseMs has passed without a renewal.
      })
      .finally(() => {
        this.renewing = false;
      });
  }

  private lose(why: string): void {
    if (this.ended) return;
    this.end();
    this.controller.abort(
      lockLost(`the lease on ${this.key}`, why, { key: this.key, leaseMs: this.leaseMs }),
    );
  }

  private ending<T>(p: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Redis did not answer within ${END_TIMEOUT_MS} ms`)),
        END_TIMEOUT_MS,
      );
    });
    return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
  }
}
