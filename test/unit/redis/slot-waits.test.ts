/** Eager calls waiting for a slot of their own worker (`tool-worker/slot-waits.ts`). */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SlotWaits, type SlotWait } from '../../../src/redis/tool-worker/slot-waits.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** The waits' outcomes as they come, by call id. */
function record(waits: SlotWaits, ids: string[]): Map<string, SlotWait> {
  const seen = new Map<string, SlotWait>();
  for (const id of ids) void waits.wait(id).then((how) => seen.set(id, how));
  return seen;
}

describe('calls waiting for a slot', () => {
  it('gives each freed slot to the oldest waiter', async () => {
    const waits = new SlotWaits(100);
    const seen = record(waits, ['a', 'b', 'c']);
    expect(waits.handOver()).toBe(true);
    expect(waits.handOver()).toBe(true);
    await vi.advanceTimersByTimeAsync(0);
    expect([...seen]).toEqual([
      ['a', 'slot'],
      ['b', 'slot'],
    ]);
    expect(waits.size).toBe(1);
  });

  it('sends a call that waited its while to the queue, and hands nothing to it after', async () => {
    const waits = new SlotWaits(100);
    const seen = record(waits, ['a']);
    await vi.advanceTimersByTimeAsync(99);
    expect(seen.size).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(seen.get('a')).toBe('queue');
    expect(waits.size).toBe(0);
    expect(waits.handOver()).toBe(false);
  });

  it('ends one wait as it is told (a lost run), and says when no such call waits', async () => {
    const waits = new SlotWaits(100);
    const seen = record(waits, ['a', 'b']);
    expect(waits.end('b', 'lost')).toBe(true);
    expect(waits.end('b', 'lost')).toBe(false);
    expect(waits.end('x', 'queue')).toBe(false);
    await vi.advanceTimersByTimeAsync(0);
    expect(seen.get('b')).toBe('lost');
    expect(waits.handOver()).toBe(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(seen.get('a')).toBe('slot');
  });

  it('ends every wait at once (the worker closes)', async () => {
    const waits = new SlotWaits(100);
    const seen = record(waits, ['a', 'b']);
    waits.endAll('queue');
    await vi.advanceTimersByTimeAsync(0);
    expect([...seen.values()]).toEqual(['queue', 'queue']);
    expect(waits.size).toBe(0);
  });
});
