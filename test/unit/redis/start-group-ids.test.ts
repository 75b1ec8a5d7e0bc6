import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkRunId } from '../../../src/operations/check-run-id.js';
import {
  batchJobId,
  batchJobIdOf,
  batchRunIds,
  MAX_BATCH_RUNS,
} from '../../../src/redis/client/start-group-ids.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('the run ids of a batch of starts', () => {
  it('are distinct UUID-shaped run ids drawn from the batch key', () => {
    const ids = batchRunIds(randomUUID(), 300);
    expect(new Set(ids).size).toBe(300);
    for (const id of ids) {
      expect(id).toMatch(UUID);
      expect(() => checkRunId(id)).not.toThrow();
    }
  });

  it('differ in their first characters, where the console and log lines show an id', () => {
    for (let round = 0; round < 20; round++) {
      const ids = batchRunIds(randomUUID(), 30);
      expect(new Set(ids.map((id) => id.slice(0, 8))).size).toBe(30);
      expect(new Set(ids.map((id) => id.slice(0, 4))).size).toBe(30);
    }
  });

  it('each name the job of their batch, which no run id can be', () => {
    const key = randomUUID();
    const job = batchJobId(key);
    expect(job).toMatch(/^starts\./);
    expect(() => checkRunId(job)).toThrow();
    for (const id of batchRunIds(key, 20)) expect(batchJobIdOf(id)).toBe(job);
    expect(batchJobIdOf(batchRunIds(randomUUID(), 1)[0]!)).not.toBe(job);
  });

  it('name no batch for a run id that is not a UUID', () => {
    expect(batchJobIdOf('run-1')).toBeUndefined();
    expect(batchJobIdOf(randomUUID().toUpperCase())).toBeUndefined();
  });

  it('refuse a key that is not a UUID and a batch the scheme cannot name', () => {
    expect(() => batchRunIds('not-a-uuid', 2)).toThrow(RangeError);
    expect(() => batchRunIds(randomUUID(), 0)).toThrow(RangeError);
    expect(() => batchRunIds(randomUUID(), MAX_BATCH_RUNS + 1)).toThrow(RangeError);
    expect(new Set(batchRunIds(randomUUID(), MAX_BATCH_RUNS)).size).toBe(MAX_BATCH_RUNS);
  });
});
