import { describe, expect, it } from 'vitest';
import type { StepRecord } from '../../../src/compiler/run-context.js';
import type { RunRecord, StepEntry } from '../../../src/engine/run-record.js';
import { runTimeline } from '../../../src/operations/run-timeline.js';

const record = (steps: StepEntry[], over: Partial<RunRecord> = {}): RunRecord => ({
  runId: 'r',
  directive: 'd',
  status: 'completed',
  outputs: null,
  steps,
  error: null,
  startedAt: 1000,
  endedAt: 2000,
  ...over,
});
const rec = (over: Partial<StepRecord>): StepRecord => ({
  status: 'completed',
  result: null,
  error: null,
  attempts: 1,
  startedAt: null,
  endedAt: null,
  ...over,
});
const entry = (name: string, durationMs: number, over: Partial<StepEntry> = {}): StepEntry => ({
  name,
  status: 'completed',
  attempts: 1,
  durationMs,
  ...over,
});

describe('runTimeline', () => {
  it("takes each step's stored start and end, in the order steps started", () => {
    const rows = runTimeline(record([entry('a', 100), entry('b', 300)]), {
      b: rec({ startedAt: 1200, endedAt: 1500, attempts: 3 }),
      a: rec({ startedAt: 1000, endedAt: 1100 }),
    });
    expect(rows).toEqual([
      { step: 'a', status: 'completed', attempts: 1, startedAt: 1000, endedAt: 1100 },
      { step: 'b', status: 'completed', attempts: 1, startedAt: 1200, endedAt: 1500 },
    ]);
  });

  it('places earlier passes of a looped step where the next pass began, marked estimated', () => {
    const rows = runTimeline(
      record([entry('loop', 100), entry('loop', 50), entry('done', 20)], { endedAt: 1500 }),
      {
        loop: rec({ startedAt: 1300, endedAt: 1350 }),
        done: rec({ startedAt: 1400, endedAt: 1420 }),
      },
    );
    expect(rows.map((r) => [r.step, r.startedAt, r.endedAt, r.estimated ?? false])).toEqual([
      ['loop', 1200, 1300, true],
      ['loop', 1300, 1350, false],
      ['done', 1400, 1420, false],
    ]);
  });

  it('shows steps under way without an end, with their retry or wait deadline, and a failure with its error', () => {
    const rows = runTimeline(
      record([entry('a', 10, { status: 'failed', error: { code: 'X', message: 'no' } })], {
        status: 'running',
        endedAt: null,
      }),
      {
        a: rec({ status: 'failed', startedAt: 1000, endedAt: 1010 }),
        b: rec({ status: 'running', startedAt: 1020, attempts: 2, retryAt: 1600 }),
        c: rec({ status: 'waiting', startedAt: 1030, deadline: 9000 }),
        branch: rec({ status: 'running' }),
      },
    );
    expect(rows).toEqual([
      {
        step: 'a',
        status: 'failed',
        attempts: 1,
        startedAt: 1000,
        endedAt: 1010,
        error: { code: 'X', message: 'no' },
      },
      { step: 'b', status: 'running', attempts: 2, startedAt: 1020, endedAt: null, retryAt: 1600 },
      { step: 'c', status: 'waiting', attempts: 1, startedAt: 1030, endedAt: null, deadline: 9000 },
    ]);
  });
});
