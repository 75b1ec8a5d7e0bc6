/**
 * The sweeper of a store that ends runs: one timer at the earliest expiry it knows (at most an
 * hour away), a prune when it fires, then the next expiry still to come; never after the store's
 * connection has ended, and never holding the process open.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ExpirySweeper, SWEEP_EVERY_MS } from '../../../src/redis/run-store/expiry-sweeper.js';

beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
afterEach(() => vi.useRealTimers());

function storeWith(expiries: (number | undefined)[], open = () => true) {
  const pruned: number[] = [];
  const store = {
    prune: () => {
      pruned.push(Date.now());
      return Promise.resolve(0);
    },
    nextExpiry: () => Promise.resolve(expiries.shift()),
    isOpen: open,
  };
  return { store, pruned };
}

describe('ExpirySweeper', () => {
  it('prunes a second after the earliest expiry it was told of, then at the next one to come', async () => {
    const { store, pruned } = storeWith([1_000_000 + 10_000, undefined]);
    const sweeper = new ExpirySweeper(store);
    sweeper.expires(1_000_000 + 5000);
    sweeper.expires(1_000_000 + 2000); // earlier: the timer moves
    sweeper.expires(1_000_000 + 8000); // later: it stays
    await vi.advanceTimersByTimeAsync(60_000);
    expect(pruned).toEqual([1_003_000, 1_011_000]);
  });

  it('waits at most an hour, however far the expiry', async () => {
    const { store, pruned } = storeWith([undefined]);
    new ExpirySweeper(store).expires(1_000_000 + 7 * 86_400_000);
    await vi.advanceTimersByTimeAsync(SWEEP_EVERY_MS);
    expect(pruned).toEqual([1_000_000 + SWEEP_EVERY_MS]);
  });

  it('does nothing once the connection has ended, and survives a prune that fails', async () => {
    const closed = storeWith([], () => false);
    new ExpirySweeper(closed.store).expires(1_000_000);
    await vi.advanceTimersByTimeAsync(5000);
    expect(closed.pruned).toEqual([]);

    const failing = new ExpirySweeper({
      prune: () => Promise.reject(new Error('Connection is closed.')),
      nextExpiry: () => Promise.resolve(undefined),
      isOpen: () => true,
    });
    failing.expires(1_000_000);
    await vi.advanceTimersByTimeAsync(5000);
    failing.stop();
  });
});
