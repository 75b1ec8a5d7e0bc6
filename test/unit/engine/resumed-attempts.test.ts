/** Where a resumed step's attempts go on from: its stored retry time and attempt deadline. */
import { describe, expect, it } from 'vitest';
import { resumedAttempts } from '../../../src/engine/resumed-attempts.js';

describe('resumedAttempts', () => {
  it('starts a step that has just started at its first attempt, with its whole timeout', () => {
    expect(resumedAttempts({ attempts: 1 }, 1000)).toEqual({
      firstAttempt: 1,
      firstTimeoutMs: undefined,
    });
  });

  it('makes the next attempt of a step that waited to retry, after the rest of the delay', () => {
    expect(resumedAttempts({ attempts: 2, retryAt: 5000 }, 4200)).toEqual({
      firstAttempt: 3,
      firstDelayMs: 800,
    });
    // Due while no process held the run: at once.
    expect(resumedAttempts({ attempts: 2, retryAt: 5000 }, 9000).firstDelayMs).toBe(0);
  });

  it('tries an interrupted attempt again with what was left of its deadline', () => {
    expect(resumedAttempts({ attempts: 2, deadline: 10_000 }, 7000)).toEqual({
      firstAttempt: 2,
      firstTimeoutMs: 3000,
    });
    // Passed while no process held the run: it times out at once.
    expect(resumedAttempts({ attempts: 2, deadline: 10_000 }, 12_000).firstTimeoutMs).toBe(0);
  });
});
