/**
 * Keyed semaphores and rate limits against the real Redis on 127.0.0.1:6379. Each test has its
 * own key prefix, deleted afterwards; a Redis that does not answer fails every test.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DirigentError, ErrorCode } from '../../src/errors/index.js';
import {
  countHolders,
  deferDelay,
  lockRedisKey,
  rateRedisKey,
  tryAcquire,
  tryConsume,
  type LockSlot,
  type RateDecision,
} from '../../src/locks/index.js';
import { waitFor } from '../support/wait-for.js';

const HOST = '127.0.0.1';
const PORT = 6379;

let prefix: string;
let redis: Redis;
let other: Redis;
const clients: Redis[] = [];
let ready = false;

/** A new connection that answered PING; throws, failing the test, when Redis does not answer. */
async function connect(name: string): Promise<Redis> {
  const client = new Redis({
    host: HOST,
    port: PORT,
    connectionName: `dirigent-test-locks-${name}`,
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  });
  let lastError: unknown;
  client.on('error', (err) => (lastError = err)); // connect() and commands report their own
  clients.push(client);
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    const reason = [lastError, err]
      .filter((e) => e !== undefined)
      .map((e) => (e instanceof Error ? e.message : String(e)));
    throw new Error(
      `Redis on ${HOST}:${PORT} did not answer (${reason.join('; ')}). ` +
        'These integration tests need a real Redis: start one (`.ci/run` does, or `redis-server`).',
    );
  }
  return client;
}

beforeEach(async () => {
  ready = false;
  prefix = `dirigent-test:locks:${randomUUID()}`;
  redis = await connect('a');
  other = await connect('b');
  ready = true;
});

afterEach(async () => {
  try {
    if (!ready) return;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    for (const client of clients.splice(0)) client.disconnect();
  }
});

/** The largest number of intervals open at one instant (an end and a start at once: no overlap). */
function maxOverlap(intervals: { start: number; end: number }[]): number {
  const events = intervals.flatMap(({ start, end }) => [
    { t: start, d: 1 },
    { t: end, d: -1 },
  ]);
  events.sort((a, b) => a.t - b.t || a.d - b.d);
  let open = 0;
  let most = 0;
  for (const e of events) most = Math.max(most, (open += e.d));
  return most;
}

describe('tryAcquire (keyed semaphore)', () => {
  it('never lets more than 2 hold a limit of 2 while 20 tasks contend, and all 20 finish', async () => {
    const key = 'repo:acme/widgets';
    const intervals: { start: number; end: number }[] = [];
    let inside = 0;
    let mostInside = 0;
    let mostCounted = 0;

    const task = async (i: number): Promise<number> => {
      const client = i % 2 === 0 ? redis : other; // two connections, as two worker processes
      const firstTry = Date.now();
      for (let deferrals = 0; ; deferrals++) {
        const slot = await tryAcquire(client, prefix, key, 2, 5_000);
        if (slot) {
          const start = performance.now();
          mostInside = Math.max(mostInside, ++inside);
          mostCounted = Math.max(mostCounted, await countHolders(redis, prefix, key, 5_000));
          await sleep(5 + Math.random() * 20); // the work done under the slot, not a wait

          inside--;
          intervals.push({ start, end: performance.now() });
          await slot.release();
          return deferrals;
        }
        const waitedMs = Date.now() - firstTry;
        // The deferral under test: what a refused task waits before it tries again.
        await sleep(deferDelay({ deferrals, waitedMs }, { baseMs: 5, maxMs: 80, agingMs: 500 }));
      }
    };

    const deferrals = await Promise.all(Array.from({ length: 20 }, (_, i) => task(i)));
    expect(intervals).toHaveLength(20);
    expect(maxOverlap(intervals)).toBe(2);
    expect(mostInside).toBe(2);
    expect(mostCounted).toBeLessThanOrEqual(2);
    expect(deferrals.some((n) => n > 0)).toBe(true); // they did contend
    expect(await countHolders(redis, prefix, key, 5_000)).toBe(0);
  });

  it('frees the slot of a holder that died without releasing, once its lease expires', async () => {
    const leaseMs = 1_000;
    const dead = await connect('dead');
    const acquiredAt = Date.now();
    const held = await tryAcquire(dead, prefix, 'repo:a', 1, leaseMs);
    expect(held).toBeDefined();
    dead.disconnect(); // the process "dies": no release, no more renewals

    expect(await tryAcquire(redis, prefix, 'repo:a', 1, leaseMs)).toBeUndefined();
    const slot: LockSlot = await waitFor(() => tryAcquire(redis, prefix, 'repo:a', 1, leaseMs), {
      what: "the dead holder's slot to be free",
      timeoutMs: 5_000,
    });
    const freedAfter = Date.now() - acquiredAt;
    expect(freedAfter).toBeGreaterThanOrEqual(leaseMs - 5);
    expect(freedAfter).toBeLessThan(leaseMs + 500);

    // The dead holder, had it lived on, learns that its lease is gone.
    await vi.waitFor(() => expect(held!.signal.aborted).toBe(true), { timeout: 2_000 });
    const reason = held!.signal.reason as DirigentError;
    expect(reason).toBeInstanceOf(DirigentError);
    expect(reason.code).toBe(ErrorCode.LOCK_LOST);
    expect(reason.retryable).toBe(true);

    expect(await countHolders(redis, prefix, 'repo:a', leaseMs)).toBe(1);
    await slot.release();
    await held!.release(); // a no-op: the lease was lost
  });

  it('keeps a live holder\u2019s slot beyond its lease by renewing it', async () => {
    const leaseMs = 1_000;
    const slot = await tryAcquire(other, prefix, 'k', 1, leaseMs);
    expect(slot).toBeDefined();
    // Time passing is what this is about: the slot stays held, checked every 100 ms, for two
    // and a half leases.
    const until = Date.now() + 2.5 * leaseMs;
    while (Date.now() < until) {
      expect(await tryAcquire(redis, prefix, 'k', 1, leaseMs)).toBeUndefined();
      expect(await countHolders(redis, prefix, 'k', leaseMs)).toBe(1);
      await sleep(100);
    }
    expect(slot!.signal.aborted).toBe(false);
    const ttl = await redis.pttl(lockRedisKey(prefix, 'k'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(leaseMs);

    await slot!.release();
    await slot!.release(); // idempotent
    expect(await countHolders(redis, prefix, 'k', leaseMs)).toBe(0);
    const next = await tryAcquire(redis, prefix, 'k', 1, leaseMs);
    expect(next).toBeDefined();
    await next!.release();
  });

  it('does not let different keys, or the same key under another prefix, block each other', async () => {
    const a = await tryAcquire(redis, prefix, 'repo:a', 1, 5_000);
    expect(a).toBeDefined();
    expect(await tryAcquire(other, prefix, 'repo:a', 1, 5_000)).toBeUndefined();

    const b = await tryAcquire(other, prefix, 'repo:b', 1, 5_000);
    expect(b).toBeDefined();
    const elsewhere = await tryAcquire(other, `${prefix}-elsewhere`, 'repo:a', 1, 5_000);
    expect(elsewhere).toBeDefined();

    expect(await redis.exists(lockRedisKey(prefix, 'repo:a'))).toBe(1);
    expect(lockRedisKey(prefix, 'repo:a')).toBe(`${prefix}:lock:repo:a`);
    expect(lockRedisKey(`${prefix}:`, 'repo:a')).toBe(`${prefix}:lock:repo:a`);
    await Promise.all([a!.release(), b!.release(), elsewhere!.release()]);
  });

  it('reports a Redis that does not answer as a retryable LOCK_UNAVAILABLE', async () => {
    const gone = await connect('gone');
    gone.disconnect();
    const err = await tryAcquire(gone, prefix, 'k', 1, 5_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DirigentError);
    expect((err as DirigentError).code).toBe(ErrorCode.LOCK_UNAVAILABLE);
    expect((err as DirigentError).retryable).toBe(true);
    expect((err as DirigentError).message).toContain("concurrency lock 'k'");
  });
});

describe('tryConsume (rate limiter)', () => {
  it('lets at most max through per window across two connections, with sensible retryAfterMs', async () => {
    const key = 'api:github';
    const max = 5;
    const durationMs = 1_000;
    const decisions = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        tryConsume(i % 2 === 0 ? redis : other, prefix, key, max, durationMs),
      ),
    );
    const admitted = decisions.filter((d) => d.ok);
    const refused = decisions.filter((d): d is Extract<RateDecision, { ok: false }> => !d.ok);
    expect(admitted).toHaveLength(max);
    expect(refused).toHaveLength(12 - max);
    for (const { retryAfterMs } of refused) {
      expect(retryAfterMs).toBeGreaterThan(durationMs / 2);
      expect(retryAfterMs).toBeLessThanOrEqual(durationMs);
    }

    // Refused calls are not counted: they do not push the window forward. The wait is the one
    // under test: the retryAfterMs the limiter answered is enough.
    expect((await tryConsume(redis, prefix, key, max, durationMs)).ok).toBe(false);
    await sleep(Math.max(...refused.map((d) => d.retryAfterMs)));
    expect(await tryConsume(other, prefix, key, max, durationMs)).toEqual({ ok: true });

    expect(rateRedisKey(prefix, key)).toBe(`${prefix}:rate:${key}`);
    const ttl = await redis.pttl(rateRedisKey(prefix, key));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(durationMs);
  });

  it('never admits more than max in any window under sustained contention from two connections', async () => {
    const key = 'api:busy';
    const max = 10;
    const durationMs = 400;
    const runMs = 1_300;
    const admitted: { send: number; recv: number }[] = [];
    const until = performance.now() + runMs;

    const loop = async (client: Redis): Promise<void> => {
      while (performance.now() < until) {
        const send = performance.now();
        const d = await tryConsume(client, prefix, key, max, durationMs);
        const recv = performance.now();
        if (d.ok) admitted.push({ send, recv });
        else await sleep(Math.min(d.retryAfterMs, Math.random() * 15)); // a refused caller's pause
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, i) => loop(i % 2 === 0 ? redis : other)));

    // Each admission ran in Redis between its send and its reply, so any max + 1 admissions span
    // at least a window: max(recv) - min(send) >= durationMs over every such set. Checked on the
    // tightest set starting at each admission (the max others with the earliest replies).
    admitted.sort((a, b) => a.send - b.send);
    for (let i = 0; i < admitted.length; i++) {
      const later = admitted
        .slice(i + 1)
        .map((a) => a.recv)
        .sort((a, b) => a - b);
      if (later.length < max) break;
      const tightest = Math.max(admitted[i]!.recv, later[max - 1]!);
      expect(tightest - admitted[i]!.send).toBeGreaterThanOrEqual(durationMs - 1);
    }
    // And the limiter is not stingier than its rate: each whole window admits max.
    expect(admitted.length).toBeGreaterThanOrEqual(max * Math.floor(runMs / durationMs));
    expect(admitted.length).toBeLessThanOrEqual(max * Math.ceil(runMs / durationMs));
  });

  it('reports a Redis that does not answer as a retryable LOCK_UNAVAILABLE', async () => {
    const gone = await connect('gone');
    gone.disconnect();
    const err = await tryConsume(gone, prefix, 'k', 1, 1_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DirigentError);
    expect((err as DirigentError).code).toBe(ErrorCode.LOCK_UNAVAILABLE);
    expect((err as DirigentError).retryable).toBe(true);
  });
});
