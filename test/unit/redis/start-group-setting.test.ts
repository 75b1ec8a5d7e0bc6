import { describe, expect, it } from 'vitest';
import { DEFAULT_START_GROUP, startGroupFromEnv } from '../../../src/redis/client/start-sender.js';

describe('DIRIGENT_START_GROUP', () => {
  it('sets the most runs one job of starts holds, 1 sending each start alone', () => {
    expect(startGroupFromEnv({})).toBe(DEFAULT_START_GROUP);
    expect(startGroupFromEnv({ DIRIGENT_START_GROUP: '' })).toBe(DEFAULT_START_GROUP);
    expect(startGroupFromEnv({ DIRIGENT_START_GROUP: '1' })).toBe(1);
    expect(startGroupFromEnv({ DIRIGENT_START_GROUP: '200' })).toBe(200);
  });

  it('still reads its former name, DIRIGENT_START_BATCH, when the new one is unset', () => {
    expect(startGroupFromEnv({ DIRIGENT_START_BATCH: '7' })).toBe(7);
    expect(startGroupFromEnv({ DIRIGENT_START_BATCH: '7', DIRIGENT_START_GROUP: '3' })).toBe(3);
    expect(() => startGroupFromEnv({ DIRIGENT_START_BATCH: 'x' })).toThrow(
      /DIRIGENT_START_BATCH is "x"/,
    );
  });

  it('refuses what is not a whole number from 1 to 65,536, naming the setting and a fix', () => {
    for (const bad of ['0', '-3', '2.5', 'many', '65537']) {
      let error: unknown;
      try {
        startGroupFromEnv({ DIRIGENT_START_GROUP: bad });
      } catch (err) {
        error = err;
      }
      expect(error).toMatchObject({ code: 'INVALID_CONFIG' });
      expect(String((error as Error).message)).toContain(`DIRIGENT_START_GROUP is "${bad}"`);
      expect((error as { hint?: string }).hint).toMatch(/unset it/);
    }
  });
});
