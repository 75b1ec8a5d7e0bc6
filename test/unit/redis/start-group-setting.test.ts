import { describe, expect, it } from 'vitest';
import { DEFAULT_START_BATCH, startBatchFromEnv } from '../../../src/redis/client/start-sender.js';

describe('DIRIGENT_START_BATCH', () => {
  it('sets the most runs one job of starts holds, 1 sending each start alone', () => {
    expect(startBatchFromEnv({})).toBe(DEFAULT_START_BATCH);
    expect(startBatchFromEnv({ DIRIGENT_START_BATCH: '' })).toBe(DEFAULT_START_BATCH);
    expect(startBatchFromEnv({ DIRIGENT_START_BATCH: '1' })).toBe(1);
    expect(startBatchFromEnv({ DIRIGENT_START_BATCH: '200' })).toBe(200);
  });

  it('refuses what is not a whole number from 1 to 65,536, naming the setting and a fix', () => {
    for (const bad of ['0', '-3', '2.5', 'many', '65537']) {
      let error: unknown;
      try {
        startBatchFromEnv({ DIRIGENT_START_BATCH: bad });
      } catch (err) {
        error = err;
      }
      expect(error).toMatchObject({ code: 'INVALID_CONFIG' });
      expect(String((error as Error).message)).toContain(`DIRIGENT_START_BATCH is "${bad}"`);
      expect((error as { hint?: string }).hint).toMatch(/unset it/);
    }
  });
});
