import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  batchProgress,
  ErrorTally,
  formatBatchSummary,
  type BatchCounts,
} from '../../../src/batches/batch-progress.js';

/** A stream that keeps what is written to it. */
function fakeStream(isTTY = false) {
  const writes: string[] = [];
  return {
    writes,
    isTTY,
    columns: 120,
    write(text: string) {
      writes.push(text);
      return true;
    },
    /** The complete lines written, without terminal codes. */
    lines(): string[] {
      return writes
        .join('')
        .split('\n')
        .filter((l) => l !== '');
    },
  };
}

function counts(partial: Partial<BatchCounts>): BatchCounts {
  return { done: 0, completed: 0, failed: 0, running: 0, skipped: 0, read: 0, ...partial };
}

const MID = counts({ done: 12_345, completed: 12_001, failed: 344, running: 32, read: 12_400 });

describe('batchProgress without a terminal', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('prints a plain line with the counts, rate and elapsed time at each interval', () => {
    const stream = fakeStream();
    const progress = batchProgress({ stream, intervalMs: 1_000 });
    vi.advanceTimersByTime(14_000);
    progress.update(MID);
    vi.advanceTimersByTime(1_000);
    expect(stream.lines()).toEqual([
      'batch: 12,345 done (12,001 completed, 344 failed), 32 running, 823/s, 15s',
    ]);
    progress.update({ ...MID, done: 12_346, completed: 12_002, running: 31 });
    vi.advanceTimersByTime(1_000);
    expect(stream.lines()[1]).toBe(
      'batch: 12,346 done (12,002 completed, 344 failed), 31 running, 772/s, 16s',
    );
  });

  it('prints nothing at an interval when nothing changed', () => {
    const stream = fakeStream();
    const progress = batchProgress({ stream, intervalMs: 1_000 });
    vi.advanceTimersByTime(5_000);
    progress.update(counts({}));
    vi.advanceTimersByTime(5_000);
    expect(stream.writes).toEqual([]);
    progress.update(MID);
    vi.advanceTimersByTime(1_000);
    progress.update({ ...MID });
    vi.advanceTimersByTime(5_000);
    expect(stream.lines()).toHaveLength(1);
  });

  it('prints the final state on stop, once, and nothing after', () => {
    const stream = fakeStream();
    const progress = batchProgress({ stream, intervalMs: 1_000 });
    vi.advanceTimersByTime(2_000);
    const final = counts({ done: 10, completed: 9, failed: 1, read: 10, skipped: 3 });
    progress.stop(final);
    progress.stop(final);
    progress.update(MID);
    vi.advanceTimersByTime(5_000);
    expect(stream.lines()).toEqual([
      'batch: 10 done (9 completed, 1 failed), 0 running, 3 skipped, 5/s, 2s',
    ]);
  });

  it('shows the share done and an ETA when the input size is known', () => {
    const stream = fakeStream();
    let read = 0;
    const progress = batchProgress({
      stream,
      intervalMs: 10_000,
      bytes: () => ({ read, total: 10_000 }),
    });
    // 100 records in the first 1,000 bytes: 900 more in the rest. 50 done in 10 s, 5/s.
    read = 1_000;
    progress.update(counts({ read: 100, done: 0, running: 8 }));
    vi.advanceTimersByTime(9_999);
    read = 2_000;
    progress.update(counts({ read: 200, done: 50, completed: 50, running: 8 }));
    vi.advanceTimersByTime(1);
    const line = stream.lines()[0] ?? '';
    expect(line).toMatch(/, 5\/s, 10s, 5%, ETA 3m10s$/);
  });

  it('shows no ETA without the input size', () => {
    const stream = fakeStream();
    const progress = batchProgress({ stream, intervalMs: 1_000, bytes: () => ({ read: 500 }) });
    progress.update(MID);
    vi.advanceTimersByTime(1_000);
    expect(stream.lines()[0]).not.toMatch(/ETA|%/);
  });
});

describe('batchProgress in a terminal (a fake one)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('draws a bar line with terminal codes at most 10 times a second, and clears it on stop', () => {
    const stream = fakeStream(false);
    let read = 0;
    const progress = batchProgress({
      stream,
      tty: true,
      bytes: () => ({ read, total: 1_000 }),
    });
    for (let i = 1; i <= 100; i++) {
      read = i * 5;
      progress.update(counts({ read: i, done: i - 1, completed: i - 1, running: 1 }));
      vi.advanceTimersByTime(10);
    }
    const drawn = stream.writes.join('');
    expect(drawn).toContain('\x1b[1G'); // back to the start of the line
    expect(drawn).toMatch(
      /batch \[█+░+\] 49% \| 99 done, 0 failed, 1 running \| 99\/s \| 1s \| ETA 1s/,
    );
    // 1 s of updates, 100 of them: about 10 redraws.
    const redraws = drawn.split('\x1b[1G').length - 1;
    expect(redraws).toBeGreaterThanOrEqual(5);
    expect(redraws).toBeLessThanOrEqual(15);

    const before = stream.writes.length;
    read = 1_000;
    progress.stop(counts({ read: 200, done: 200, completed: 199, failed: 1 }));
    const end = stream.writes.slice(before).join('');
    expect(end).toContain('\x1b[2K'); // the bar line cleared
    expect(
      end.endsWith('batch: 200 done (199 completed, 1 failed), 0 running, 200/s, 1s, 100%\n'),
    ).toBe(true);
  });
});

describe('formatBatchSummary', () => {
  it('gives the counts, the rate and the most frequent errors with their first lines', () => {
    const text = formatBatchSummary({
      batchId: 'b-7f3c',
      counts: counts({ done: 12_345, completed: 12_001, failed: 344, skipped: 100, read: 12_445 }),
      elapsedMs: 125_000,
      topErrors: [
        {
          code: 'TOOL_FAILED',
          message: 'job <n> failed',
          count: 200,
          lines: [3, 17, 42, 51, 77],
        },
        {
          code: 'INVALID_INPUTS',
          message: 'line 9 has 2 fields, the CSV header has 3',
          count: 1,
          lines: [9],
        },
      ],
    });
    expect(text).toBe(
      [
        'Batch b-7f3c: 12,345 done in 2m05s (99/s)',
        '  12,001 completed',
        '     344 failed',
        '     100 skipped (done in an earlier attempt)',
        '',
        'Most frequent errors:',
        '  200 × TOOL_FAILED: job <n> failed',
        '        lines 3, 17, 42, 51, 77, …',
        '    1 × INVALID_INPUTS: line 9 has 2 fields, the CSV header has 3',
        '        line 9',
      ].join('\n'),
    );
  });

  it('says what is still running or waiting, and leaves out an empty error list', () => {
    const text = formatBatchSummary({
      batchId: 'b1',
      counts: { ...counts({ done: 3, completed: 3, running: 2, read: 6 }), waiting: 1 },
      elapsedMs: 500,
      topErrors: [],
    });
    expect(text).toBe(
      [
        'Batch b1: 3 done in 0s (6/s)',
        '  3 completed',
        '  0 failed',
        '  1 waiting for a signal',
        '  2 still running',
      ].join('\n'),
    );
  });
});

describe('ErrorTally', () => {
  it('groups errors whose messages differ only in numbers and ids', () => {
    const tally = new ErrorTally();
    tally.add(1, { code: 'TOOL_FAILED', message: 'job 123 failed' });
    tally.add(2, { code: 'TOOL_FAILED', message: 'job 456 failed' });
    tally.add(3, { code: 'RUN_TIMEOUT', message: 'job 123 failed' });
    tally.add(4, {
      code: 'TOOL_FAILED',
      message: 'job 9 failed',
    });
    tally.add(5, {
      code: 'HTTP_FAILED',
      message: 'run 0b6f1c52-3a8e-4d1b-9a43-5f2e8c7d9e10 got 503 after 1.5 s',
    });
    tally.add(6, {
      code: 'HTTP_FAILED',
      message: 'run 7d2a9e41-1b3c-4f5d-8e6a-0c9b8a7f6e5d got 502 after 2.25 s',
    });
    expect(tally.top()).toEqual([
      { code: 'TOOL_FAILED', message: 'job <n> failed', count: 3, lines: [1, 2, 4] },
      { code: 'HTTP_FAILED', message: 'run <id> got <n> after <n> s', count: 2, lines: [5, 6] },
      { code: 'RUN_TIMEOUT', message: 'job 123 failed', count: 1, lines: [3] },
    ]);
    expect(tally.total).toBe(6);
  });

  it('shows a group message as it was when all its errors said the same', () => {
    const tally = new ErrorTally();
    tally.add(7, { code: 'INVALID_INPUTS', message: 'missing input "name"' });
    tally.add(9, { code: 'INVALID_INPUTS', message: 'missing input "name"' });
    expect(tally.top()).toEqual([
      { code: 'INVALID_INPUTS', message: 'missing input "name"', count: 2, lines: [7, 9] },
    ]);
  });

  it('treats long tokens with digits as ids, and keeps plain words', () => {
    const tally = new ErrorTally();
    tally.add(1, { code: 'X', message: 'key 01HZX3K8Q9V7R2M4N6P8T0W2Y4 is unknown_parameter' });
    tally.add(2, { code: 'X', message: 'key 01HZX3K8Q9V7R2M4N6P8T0AAAA is unknown_parameter' });
    expect(tally.top()[0]?.message).toBe('key <id> is unknown_parameter');
  });

  it('keeps the first few lines of a group, and the top n groups, most frequent first', () => {
    const tally = new ErrorTally();
    for (let line = 1; line <= 50; line++) {
      tally.add(line, { code: line % 3 === 0 ? 'A' : 'B', message: `failed at step ${line}` });
    }
    tally.add(51, { code: 'C', message: 'other' });
    const top = tally.top(2);
    expect(top.map((g) => [g.code, g.count, g.lines])).toEqual([
      ['B', 34, [1, 2, 4, 5, 7]],
      ['A', 16, [3, 6, 9, 12, 15]],
    ]);
  });

  it('keeps at most maxGroups groups, dropping the rarest, and counts what it dropped', () => {
    const tally = new ErrorTally({ maxGroups: 1000 });
    for (let i = 0; i < 50; i++) tally.add(i, { code: 'COMMON', message: 'always the same' });
    // Messages with nothing to normalise: every one its own group.
    const words = (i: number) => i.toString(26).replace(/\d/g, (d) => 'qrstuvwxyz'[Number(d)] ?? d);
    for (let i = 0; i < 100_000; i++) tally.add(i, { code: 'RARE', message: `odd ${words(i)}` });
    const groups = (tally as unknown as { groups: Map<string, unknown> }).groups;
    expect(groups.size).toBeLessThanOrEqual(1000);
    expect(tally.total).toBe(100_050);
    expect(tally.dropped).toBeGreaterThan(98_000);
    expect(tally.top(1)[0]).toMatchObject({ code: 'COMMON', count: 50 });
  });
});
