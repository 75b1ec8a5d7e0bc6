import { describe, expect, it } from 'vitest';
import { DEFER_DEFAULTS, deferDelay } from '../../../src/locks/index.js';

const low = { random: () => 0 };
const high = { random: () => 0.999_999 };

describe('deferDelay', () => {
  it('doubles its ceiling with each deferral, from 50 ms', () => {
    expect([0, 1, 2, 3].map((deferrals) => deferDelay({ deferrals }, high))).toEqual([
      49, 99, 199, 399,
    ]);
    expect([0, 1, 2, 3].map((deferrals) => deferDelay({ deferrals }, low))).toEqual([
      25, 50, 100, 200,
    ]);
  });

  it('never exceeds 5 s, however many deferrals', () => {
    for (const deferrals of [7, 8, 20, 1000, Number.MAX_SAFE_INTEGER]) {
      expect(deferDelay({ deferrals }, high)).toBe(DEFER_DEFAULTS.maxMs - 1);
      expect(deferDelay({ deferrals }, low)).toBe(DEFER_DEFAULTS.maxMs / 2);
    }
  });

  it('spreads jobs deferred together (jitter in [ceiling/2, ceiling))', () => {
    const delays = Array.from({ length: 200 }, () => deferDelay({ deferrals: 4 }));
    for (const d of delays) {
      expect(d).toBeGreaterThanOrEqual(400);
      expect(d).toBeLessThan(800);
    }
    expect(new Set(delays).size).toBeGreaterThan(50);
  });

  it('tries a job that has waited long as eagerly as a new one (aging)', () => {
    expect(deferDelay({ deferrals: 30, waitedMs: 29_999 }, high)).toBe(4999);
    expect(deferDelay({ deferrals: 30, waitedMs: 30_000 }, high)).toBe(49);
    expect(deferDelay({ deferrals: 30, waitedMs: 10_000 }, { ...high, agingMs: 5_000 })).toBe(49);
  });

  it('waits at least for the rate limit to free a place', () => {
    expect(deferDelay({ deferrals: 0, retryAfterMs: 700 }, low)).toBe(700);
    expect(deferDelay({ deferrals: 0, retryAfterMs: 700 }, high)).toBe(749);
    // The backoff still applies when it is longer than the rate's wait.
    expect(deferDelay({ deferrals: 10, retryAfterMs: 700 }, high)).toBe(4999);
  });

  it('takes its own base and cap', () => {
    const options = { baseMs: 5, maxMs: 100, random: () => 0.5 };
    expect([0, 1, 2, 3, 4, 5, 6].map((deferrals) => deferDelay({ deferrals }, options))).toEqual([
      3, 7, 15, 30, 60, 75, 75,
    ]);
  });

  it('is always a positive integer, even on odd input', () => {
    for (const state of [
      { deferrals: -3 },
      { deferrals: Number.NaN },
      { deferrals: 2.7 },
      { deferrals: Infinity },
    ]) {
      const d = deferDelay(state, { random: () => Number.NaN });
      expect(Number.isInteger(d)).toBe(true);
      expect(d).toBeGreaterThanOrEqual(1);
    }
    expect(deferDelay({ deferrals: 0 }, { baseMs: 0, random: () => 0 })).toBe(1);
  });
});
