/**
 * The compact JSON of a run's parts in the Redis run store: each form reads back to the value it
 * was written from, and leaves out what is at its default while a run waits, so that a waiting
 * run's step record fits a listpack value (64 bytes).
 */
import { describe, expect, it } from 'vitest';
import type { StepRecord } from '../../../src/compiler/run-context.js';
import type { RunRecord } from '../../../src/engine/run-record.js';
import {
  compactCounters,
  compactMeta,
  compactRecord,
  compactSnapshot,
  compactStep,
  fullCounters,
  fullMeta,
  fullRecord,
  fullSnapshot,
  fullStep,
  type RunMeta,
} from '../../../src/redis/run-store/compact-run-parts.js';

/** A record as the engine makes it, waiting at an instruction. */
const waitingRecord = (): RunRecord => ({
  runId: '6036a4ef-b7ee-4fec-bc6b-1e6256441f5f',
  directive: 'waiting-run',
  status: 'waiting',
  outputs: null,
  steps: [{ name: 'draft', status: 'completed', attempts: 1, durationMs: 3 }],
  error: null,
  startedAt: 1795909520245,
  endedAt: null,
  summary: 'who=Ada',
  waiting: [{ step: 'ask', signal: 'ask', text: 'Approve?' }],
});

/** A run machine's persisted snapshot, as xstate gives it, at its first step. */
const runSnapshot = () => ({
  status: 'active',
  value: { main: 'ask' },
  historyValue: {},
  context: { inputs: {}, state: {}, error: null, runError: null, returned: null },
  children: {},
});

describe('compact run parts', () => {
  it('keep a run record without its id, steps, status, directive and what is null, and read it back whole', () => {
    const record = waitingRecord();
    const json = compactRecord(record);
    expect(JSON.parse(json)).toEqual({
      startedAt: record.startedAt,
      summary: 'who=Ada',
      waiting: record.waiting,
    });
    const back = fullRecord(json, {
      runId: record.runId,
      status: 'waiting',
      directive: 'waiting-run',
      steps: record.steps,
    });
    expect(back).toEqual(record);
    // In the order the engine makes a record in.
    expect(Object.keys(back)).toEqual(Object.keys(record));

    const ended: RunRecord = {
      ...record,
      status: 'failed',
      outputs: { text: 'x' },
      error: { code: 'COMMAND_FAILED', message: 'no', step: 'ask' },
      endedAt: record.startedAt + 5,
    };
    const left = { runId: ended.runId, status: 'failed', directive: ended.directive, steps: [] };
    expect(fullRecord(compactRecord(ended), left)).toEqual({ ...ended, steps: [] });
  });

  it("keep a step under way in 64 bytes or less, a listpack's largest value, and read it back whole", () => {
    const running: StepRecord = {
      status: 'running',
      result: null,
      error: null,
      attempts: 1,
      startedAt: 1795909524667,
      endedAt: null,
      seq: 1,
    };
    const json = compactStep(running)!;
    expect(json).toBe('{"startedAt":1795909524667,"seq":1}');
    expect(json.length).toBeLessThanOrEqual(64);
    expect(fullStep(json)).toEqual(running);

    const retried: StepRecord = {
      status: 'failed',
      result: { n: 1 },
      error: { code: 'X', message: 'y', retryable: true },
      attempts: 3,
      startedAt: null,
      endedAt: 1795909524700,
      retryAt: 1795909525000,
      held: true,
    };
    expect(fullStep(compactStep(retried)!)).toEqual(retried);
  });

  it('keep a step record whose result JSON cannot hold (undefined) whole', () => {
    const record = { status: 'completed', result: undefined, error: null } as unknown as StepRecord;
    expect(compactStep(record)).toBeUndefined();
  });

  it("keep a run machine's snapshot without its defaults, and any other snapshot as it is", () => {
    const snapshot = runSnapshot();
    const json = compactSnapshot(snapshot);
    expect(json).toBe('~{"value":{"main":"ask"},"context":{}}');
    expect(fullSnapshot(json)).toEqual(snapshot);

    const later = {
      ...snapshot,
      status: 'done',
      output: { text: 'x' },
      historyValue: { h: [] },
      context: { ...snapshot.context, inputs: { who: 'Ada' }, undo: [{ step: 'a', result: 1 }] },
    };
    expect(fullSnapshot(compactSnapshot(later))).toEqual(later);

    // Not a run machine's: kept as it is, read back the same (no defaults added).
    for (const other of [{ value: 'a', context: {} }, null, [1, 2], 'text', { context: [] }])
      expect(fullSnapshot(compactSnapshot(other))).toEqual(other);
    const noStatus: Record<string, unknown> = { ...snapshot };
    delete noStatus.status;
    expect(fullSnapshot(compactSnapshot(noStatus))).toEqual(noStatus);
    // As stores wrote it before: plain JSON.
    expect(fullSnapshot(JSON.stringify(snapshot))).toEqual(snapshot);
  });

  it('keep counters without zeros', () => {
    expect(compactCounters({ transitions: 1, spawns: 0 })).toBe('{"transitions":1}');
    expect(fullCounters('{"transitions":1}')).toEqual({ transitions: 1, spawns: 0 });
    expect(fullCounters(compactCounters({ transitions: 0, spawns: 2 }))).toEqual({
      transitions: 0,
      spawns: 2,
    });
  });

  it("keep a run's meta with its file under its project folder, and without its text", () => {
    const meta: RunMeta = {
      source: { file: '/srv/flows/.ai/directives/review.md', text: 'TEXT', hash: 'h' },
      projectDir: '/srv/flows',
      depth: 0,
      parentRunId: null,
    };
    const json = compactMeta(meta);
    expect(JSON.parse(json)).toEqual({ dir: '/srv/flows', in: '.ai/directives/review.md' });
    expect(fullMeta(json)).toEqual({ ...meta, source: { file: meta.source.file } });

    const child: RunMeta = {
      source: { file: 'elsewhere/review.md', text: 'TEXT' },
      projectDir: '/srv/flows',
      depth: 2,
      parentRunId: 'parent-1',
      trace: { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), sampled: true, trigger: 'child' },
      tools: { 'dirigent/util/echo': 'c'.repeat(64) },
    };
    expect(fullMeta(compactMeta(child))).toEqual({ ...child, source: { file: child.source.file } });
    // A folder that only begins like the project's is not under it.
    const beside = { ...meta, source: { file: '/srv/flows-old/x.md', text: '' } };
    expect(fullMeta(compactMeta(beside)).source.file).toBe('/srv/flows-old/x.md');
  });
});
