import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunListFeed } from '../../../src/operations/run-list-feed.js';
import { SeenRuns, type RunSummary } from '../../../src/run-backend/run-changes.js';

const run = (runId: string, status: string, startedAt = 1) => ({ runId, status, startedAt });

describe('SeenRuns', () => {
  it('takes the first look as the baseline, then tells new runs and status changes only', () => {
    const seen = new SeenRuns();
    expect(seen.update([run('a', 'running'), run('b', 'completed')])).toEqual([]);
    expect(seen.update([run('a', 'running'), run('b', 'completed'), run('c', 'queued')])).toEqual([
      'c',
    ]);
    expect(seen.update([run('a', 'completed'), run('c', 'queued')])).toEqual(['a']);
    expect(seen.unended()).toEqual(['c']);
  });

  it('forgets runs that are gone, and ended runs started before a time', () => {
    const seen = new SeenRuns();
    seen.update([run('old', 'failed', 1), run('new', 'failed', 100), run('live', 'waiting', 1)]);
    seen.update([{ runId: 'new', status: null, startedAt: 100 }]);
    seen.prune(50);
    // Seen again, each is news: nothing of them is remembered.
    expect(seen.update([run('old', 'failed', 1), run('new', 'failed', 100)])).toEqual([
      'old',
      'new',
    ]);
    expect(seen.unended()).toEqual(['live']);
  });
});

describe('RunListFeed', () => {
  // The feed's clock is the timers': faked, its looks happen when the test moves time on.
  afterEach(() => void vi.useRealTimers());

  it('looks only while someone listens, and tells every listener each batch', async () => {
    vi.useFakeTimers();
    let opened = 0;
    let looks = 0;
    const batch: RunSummary[] = [
      { runId: 'a', directive: 'd', status: 'running', startedAt: 1, endedAt: null, error: null },
    ];
    const feed = new RunListFeed(() => {
      opened++;
      return { poll: async () => (++looks === 2 ? batch : []) };
    }, 10);
    const heard: RunSummary[][] = [];
    const heard2: RunSummary[][] = [];
    const stop = feed.subscribe((b) => heard.push(b));
    const stop2 = feed.subscribe((b) => heard2.push(b));
    await vi.advanceTimersByTimeAsync(60); // six looks of 10 ms
    expect(looks).toBeGreaterThanOrEqual(6);
    expect(heard).toEqual([batch]);
    expect(heard2).toEqual([batch]);
    stop();
    stop2();
    const after = looks;
    await vi.advanceTimersByTimeAsync(1000);
    expect(looks).toBe(after);
    expect(opened).toBe(1);
  });
});
