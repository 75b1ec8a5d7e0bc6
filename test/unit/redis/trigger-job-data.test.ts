/**
 * What a job of the triggers queue may carry: a directive, inputs, an idempotency key with its
 * reuse policy, a wait; anything else is refused with INVALID_REQUEST saying what is wrong.
 */
import { describe, expect, it } from 'vitest';
import { triggerData } from '../../../src/redis/triggers/trigger-job-data.js';

describe("a trigger job's data", () => {
  it('takes a directive with inputs, a key, its reuse policy and a wait', () => {
    const data = {
      directive: 'orders/charge',
      inputs: { order: 'A-1' },
      idempotencyKey: 'charge-A-1',
      reuse: 'failed',
      wait: 30,
    };
    expect(triggerData(data)).toEqual(data);
  });

  it.each([
    [{ directive: 'x', reuse: 'always' }, 'has a "reuse" that is neither "never" nor "failed"'],
    [{ directive: 'x', extra: 1 }, 'has unknown fields: extra'],
    [{ inputs: {} }, 'needs "directive"'],
    [{ directive: 'x', wait: 601 }, 'has a "wait" that is not a number of seconds'],
  ])('refuses %j: it %s', (data, says) => {
    expect(() => triggerData(data)).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
    expect(() => triggerData(data)).toThrow(says);
  });
});
