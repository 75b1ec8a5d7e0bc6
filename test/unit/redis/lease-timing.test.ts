/**
 * The timing of workers' leases (`redis/takeover/lease-renewer.ts`, `event-loop-stalls.ts`):
 * renewed every sixth of the lease, stretched to cover the event-loop stalls a worker has seen in
 * the last minute (up to three leases), and those stalls measured as they happen.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EventLoopStalls } from '../../../src/redis/takeover/event-loop-stalls.js';
import { renewEveryMs, stretchedLeaseMs } from '../../../src/redis/takeover/lease-renewer.js';
import { DEFAULT_WORKER_LEASE_MS } from '../../../src/redis/takeover/worker-lease.js';

/** Holds this process's event loop for `ms`, as a long synchronous task would. */
function holdEventLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: no timer runs meanwhile
  }
}

describe('lease timing', () => {
  it('renews the default 1.5 s lease every 250 ms, so a stall of 1.25 s at once is always survived', () => {
    expect(DEFAULT_WORKER_LEASE_MS).toBe(1500);
    expect(renewEveryMs(DEFAULT_WORKER_LEASE_MS)).toBe(250);
    expect(DEFAULT_WORKER_LEASE_MS - renewEveryMs(DEFAULT_WORKER_LEASE_MS)).toBe(1250);
    expect(renewEveryMs(300)).toBe(50);
    expect(renewEveryMs(60_000)).toBe(10_000);
  });

  it('keeps the lease of a worker whose event loop does not stall, or stalls briefly', () => {
    expect(stretchedLeaseMs(1500, 0)).toBe(1500);
    expect(stretchedLeaseMs(1500, 800)).toBe(1500); // 1.5 × 800 + 250 is still within 1.5 s
  });

  it('stretches the lease to a stall and a half plus a renewal interval, up to three leases', () => {
    expect(stretchedLeaseMs(1500, 1000)).toBe(1750);
    expect(stretchedLeaseMs(1500, 2000)).toBe(3250);
    expect(stretchedLeaseMs(1500, 60_000)).toBe(4500);
  });

  describe('event-loop stalls', () => {
    let stalls: EventLoopStalls | undefined;
    afterEach(() => stalls?.stop());

    it('remembers the longest time the event loop was held up, for a minute', () => {
      stalls = new EventLoopStalls(0);
      holdEventLoop(400);
      const now = Date.now();
      expect(stalls.longestMs(now)).toBeGreaterThanOrEqual(300);
      expect(stalls.longestMs(now + 30_000)).toBeGreaterThanOrEqual(300);
      expect(stalls.longestMs(now + 61_000)).toBe(0);
    });

    it('does not count the stalls of its first seconds, when a worker starts', () => {
      stalls = new EventLoopStalls(10_000);
      holdEventLoop(400);
      expect(stalls.longestMs()).toBe(0);
    });
  });
});
