import { describe, expect, it } from 'vitest';
import { DirigentError, ErrorCode } from '../../../src/errors/index.js';
import { BuiltinDispatcher } from '../../../src/tools/index.js';
import { makeCall, rejection } from './helpers.js';

const dispatcher = new BuiltinDispatcher();

describe('dirigent/util/sleep', () => {
  it('resolves { slept: ms } after the delay, coercing "20" to 20', async () => {
    const start = Date.now();
    await expect(
      dispatcher.dispatch(makeCall('dirigent/util/sleep', { ms: '20' })),
    ).resolves.toEqual({ slept: 20 });
    expect(Date.now() - start).toBeGreaterThanOrEqual(15);
  });

  it('requires a non-negative integer ms', async () => {
    const err = await rejection(dispatcher.dispatch(makeCall('dirigent/util/sleep', { ms: -1 })));
    expect(err.code).toBe(ErrorCode.INVALID_PARAMS);
    expect(err.message).toContain('/ms must be >= 0');
  });

  it('rejects quickly with CANCELLED when aborted early', async () => {
    const controller = new AbortController();
    const start = Date.now();
    const pending = dispatcher.dispatch(
      makeCall('dirigent/util/sleep', { ms: 10_000 }, { signal: controller.signal }),
    );
    setTimeout(() => controller.abort(), 20);
    const err = await rejection(pending);
    expect(err.code).toBe(ErrorCode.CANCELLED);
    expect(Date.now() - start).toBeLessThan(1000);
  });

  it('rejects with the abort reason when that is a DirigentError (a step timeout)', async () => {
    const controller = new AbortController();
    const pending = dispatcher.dispatch(
      makeCall('dirigent/util/sleep', { ms: 10_000 }, { signal: controller.signal }),
    );
    const timeout = DirigentError.retryable(
      ErrorCode.STEP_TIMEOUT,
      'step "wait" timed out after 0.01 s',
    );
    setTimeout(() => controller.abort(timeout), 10);
    expect(await rejection(pending)).toBe(timeout);
  });
});
