import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../../src/engine/run-record.js';
import type { RunFeedEvent } from '../../../src/run-backend/run-feed-event.js';
import { RunFeed } from '../../../src/run-backend/run-feed.js';

const step = (runId: string, id: string, step = 'a'): RunFeedEvent => ({
  type: 'step.started',
  id,
  runId,
  at: 1,
  step,
  attempt: 1,
});
const record = (status: RunRecord['status']): RunRecord => ({
  runId: 'r',
  directive: 'd',
  status,
  outputs: null,
  steps: [],
  error: null,
  startedAt: 1,
  endedAt: null,
});

async function all(feed: RunFeed): Promise<string[]> {
  const ids: string[] = [];
  for await (const e of feed) ids.push(e.id);
  return ids;
}

describe('RunFeed', () => {
  it('gives what was pushed before and after the reader came, in order, and ends with its run', async () => {
    const feed = new RunFeed('r');
    feed.push(step('r', '1'));
    const read = all(feed);
    feed.push(step('child', '2')); // a child's end is not the feed's
    feed.push({ type: 'run.ended', id: '3', runId: 'child', at: 1, record: record('completed') });
    feed.push({ type: 'run.ended', id: '4', runId: 'r', at: 1, record: record('completed') });
    feed.push(step('r', '5')); // nothing after the end
    expect(await read).toEqual(['1', '2', '3', '4']);
    expect(feed.isDone).toBe(true);
  });

  it('ends at once with a run.state of an ended run, and not with one of a run under way', async () => {
    const ended = new RunFeed('r');
    ended.push({ type: 'run.state', id: '0', runId: 'r', at: 1, record: record('failed') });
    expect(await all(ended)).toEqual(['0']);
    const going = new RunFeed('r');
    going.push({ type: 'run.state', id: '0', runId: 'r', at: 1, record: record('waiting') });
    expect(going.isDone).toBe(false);
  });

  it('stops when closed (a reader waiting is told it is over) and tells whoever closes with it', async () => {
    const feed = new RunFeed('r');
    let closed = 0;
    feed.onClose(() => closed++);
    const read = all(feed);
    feed.close();
    feed.close();
    expect(await read).toEqual([]);
    expect(closed).toBe(1);
  });

  it('gives what was pushed, then rejects with the error it failed with', async () => {
    const feed = new RunFeed('r');
    feed.push(step('r', '1'));
    feed.fail(new Error('redis went away'));
    const ids: string[] = [];
    await expect(
      (async () => {
        for await (const e of feed) ids.push(e.id);
      })(),
    ).rejects.toThrow(/redis went away/);
    expect(ids).toEqual(['1']);
  });
});
