import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkRunId } from '../../../src/operations/check-run-id.js';
import {
  groupJobId,
  groupJobIdOf,
  groupRunIds,
  MAX_GROUP_RUNS,
} from '../../../src/redis/client/start-group-ids.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('the run ids of a group of starts', () => {
  it('are distinct UUID-shaped run ids drawn from the group key', () => {
    const ids = groupRunIds(randomUUID(), 300);
    expect(new Set(ids).size).toBe(300);
    for (const id of ids) {
      expect(id).toMatch(UUID);
      expect(() => checkRunId(id)).not.toThrow();
    }
  });

  it('differ in their first characters, where the console and log lines show an id', () => {
    for (let round = 0; round < 20; round++) {
      const ids = groupRunIds(randomUUID(), 30);
      expect(new Set(ids.map((id) => id.slice(0, 8))).size).toBe(30);
      expect(new Set(ids.map((id) => id.slice(0, 4))).size).toBe(30);
    }
  });

  it('each name the job of their group, which no run id can be', () => {
    const key = randomUUID();
    const job = groupJobId(key);
    expect(job).toMatch(/^starts\./);
    expect(() => checkRunId(job)).toThrow();
    for (const id of groupRunIds(key, 20)) expect(groupJobIdOf(id)).toBe(job);
    expect(groupJobIdOf(groupRunIds(randomUUID(), 1)[0]!)).not.toBe(job);
  });

  it('name no group for a run id that is not a UUID', () => {
    expect(groupJobIdOf('run-1')).toBeUndefined();
    expect(groupJobIdOf(randomUUID().toUpperCase())).toBeUndefined();
  });

  it('refuse a key that is not a UUID and a group the scheme cannot name', () => {
    expect(() => groupRunIds('not-a-uuid', 2)).toThrow(RangeError);
    expect(() => groupRunIds(randomUUID(), 0)).toThrow(RangeError);
    expect(() => groupRunIds(randomUUID(), MAX_GROUP_RUNS + 1)).toThrow(RangeError);
    expect(new Set(groupRunIds(randomUUID(), MAX_GROUP_RUNS)).size).toBe(MAX_GROUP_RUNS);
  });
});
