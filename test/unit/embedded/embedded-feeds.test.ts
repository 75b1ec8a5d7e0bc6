import { describe, expect, it } from 'vitest';
import { EmbeddedFeeds } from '../../../src/embedded/embedded-feeds.js';
import type { RunRecord } from '../../../src/engine/run-record.js';
import { FEED_START, RunFeed } from '../../../src/run-backend/run-feed.js';

const ended = (runId: string): RunRecord => ({
  runId,
  directive: 'd',
  status: 'completed',
  outputs: {},
  steps: [],
  error: null,
  startedAt: 1,
  endedAt: 2,
});

/** What a feed of `runId` following from `after` holds right away. */
function follow(feeds: EmbeddedFeeds, runId: string, after = FEED_START) {
  const feed = new RunFeed(runId);
  const got: string[] = [];
  void (async () => {
    for await (const e of feed) got.push(`${e.id}:${e.type}:${e.runId}`);
  })();
  return { attached: feeds.attach(runId, feed, after), got, feed };
}

describe('EmbeddedFeeds', () => {
  it("numbers each run's events from 1 and gives a follower those after the id it names", async () => {
    const feeds = new EmbeddedFeeds(() => undefined);
    feeds.observer.stepStarted!('r', 'a', 1);
    feeds.observer.stepStarted!('r', 'b', 1);
    expect(feeds.position('r')).toBe('2');
    const f = follow(feeds, 'r', '1');
    feeds.observer.runEnded!(ended('r'));
    await Promise.resolve();
    await Promise.resolve();
    expect(f.attached).toBe(true);
    expect(f.got).toEqual(['2:step.started:r', '3:run.ended:r']);
  });

  it("writes a child run's steps into its parents' feeds too, and its own end only in its own", () => {
    const feeds = new EmbeddedFeeds((id) => ({ child: 'parent', parent: 'root' })[id]);
    feeds.observer.stepStarted!('child', 'x', 1);
    feeds.observer.runEnded!(ended('child'));
    expect(feeds.position('child')).toBe('2');
    expect(feeds.position('parent')).toBe('1');
    expect(feeds.position('root')).toBe('1');
  });

  it('keeps a bounded log: an id it no longer holds cannot be followed on from', () => {
    const feeds = new EmbeddedFeeds(() => undefined, { eventsPerRun: 3 });
    for (const s of ['a', 'b', 'c', 'd', 'e']) feeds.observer.stepStarted!('r', s, 1);
    expect(follow(feeds, 'r', '1').attached).toBe(false);
    expect(follow(feeds, 'r', '2').attached).toBe(true);
    expect(follow(feeds, 'r', '99').attached).toBe(false);
  });

  it('drops the logs of runs at rest beyond its limit, oldest first, but not one still followed', () => {
    const feeds = new EmbeddedFeeds(() => undefined, { restingRuns: 2 });
    feeds.observer.stepStarted!('one', 'a', 1);
    feeds.rested('one'); // it waits in the store; someone follows it still
    const kept = follow(feeds, 'one', '0');
    for (const id of ['two', 'three', 'four']) feeds.observer.runEnded!(ended(id));
    expect(feeds.position('one')).toBe('1'); // followed: kept
    expect(feeds.position('two')).toBe(FEED_START); // dropped
    expect(feeds.position('four')).toBe('1');
    kept.feed.close();
  });
});
