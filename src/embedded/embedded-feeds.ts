/**
 * The event feeds of embedded runs (see `run-backend/run-feed-event.ts`): one log per run, kept in
 * this process, appended to by the engine's observer as things happen, so that every follower
 * gets every event in order. A run's log also gets the step events of its child runs. Event ids
 * count from 1 within a log.
 *
 * Logs are bounded: a log keeps its last {@link FeedLimits.eventsPerRun} events (a follower that
 * resumes after an older id gets `run.state` first), and the logs of runs no longer live here
 * (ended, or waiting in `.dirigent/runs/`) are dropped beyond {@link FeedLimits.restingRuns},
 * oldest first.
 */
import type { EngineObserver } from '../engine/engine-options.js';
import {
  feedObserver,
  type RunEventBody,
  type StoredFeedEvent,
} from '../run-backend/run-feed-event.js';
import { FEED_START, type RunFeed } from '../run-backend/run-feed.js';

/** How much the feeds keep. */
export interface FeedLimits {
  /** Events kept per run (default 10,000). */
  eventsPerRun: number;
  /** Logs kept of runs that ended or rest in the store (default 1,000). */
  restingRuns: number;
}

/** One run's log and its followers. */
class FeedLog {
  readonly events: StoredFeedEvent[] = [];
  /** The number of the last event appended (its id). */
  seq = 0;
  readonly followers = new Set<RunFeed>();

  /** The id of the last event, {@link FEED_START} before the first. */
  get position(): string {
    return this.seq === 0 ? FEED_START : String(this.seq);
  }

  /** The events after id `after`, or undefined when the log no longer holds all of them. */
  after(after: string): StoredFeedEvent[] | undefined {
    const n = after === FEED_START ? 0 : Number(after);
    if (!Number.isInteger(n) || n < 0 || n > this.seq) return undefined;
    const first = this.seq - this.events.length; // the number of the last event dropped
    if (n < first) return undefined;
    return this.events.slice(n - first);
  }
}

/** See the module comment. */
export class EmbeddedFeeds {
  private readonly logs = new Map<string, FeedLog>();
  /** Runs whose logs may be dropped (ended, or let go), oldest first. */
  private readonly resting = new Set<string>();
  private readonly limits: FeedLimits;

  /** `parentOf` names the parent of a run live here: its step events go to the parent's feed too. */
  constructor(
    private readonly parentOf: (runId: string) => string | undefined,
    limits: Partial<FeedLimits> = {},
  ) {
    this.limits = { eventsPerRun: 10_000, restingRuns: 1_000, ...limits };
  }

  /** The observer to give the engine: it writes every run's feed. */
  readonly observer: EngineObserver = feedObserver((body) => this.append(body));

  /** The position of `runId`'s feed now: the id its next follower resumes after. */
  position(runId: string): string {
    return this.logs.get(runId)?.position ?? FEED_START;
  }

  /**
   * Pushes the events of `runId`'s feed after `after` into `feed`, then each new one as it comes,
   * until the feed ends; false (nothing pushed) when the log no longer holds every event after
   * `after`, or there is none. With `begin`, following a run this process holds no log of from
   * {@link FEED_START} begins one (a run at rest in the store may come to life here: a signal
   * delivered in this process resumes it).
   */
  attach(runId: string, feed: RunFeed, after: string, begin = false): boolean {
    let log = this.logs.get(runId);
    if (log === undefined && begin && after === FEED_START) {
      this.logs.set(runId, (log = new FeedLog()));
      this.rest(runId);
    }
    const missed = log?.after(after);
    if (log === undefined || missed === undefined) return false;
    for (const event of missed) feed.push(event);
    if (feed.isDone) return true;
    log.followers.add(feed);
    feed.onClose(() => log.followers.delete(feed));
    return true;
  }

  /** The run is no longer live here (it waits in the store): its log may go when others come. */
  rested(runId: string): void {
    if (this.logs.has(runId)) this.rest(runId);
  }

  private append(told: RunEventBody): void {
    // Kept as an object: a copy of the record, which the run's engine goes on changing.
    const body =
      told.type === 'run.ended' ? { ...told, record: structuredClone(told.record) } : told;
    this.write(body.runId, body);
    // A child's steps are its parents' progress too; its own run.* events are its own.
    if (!body.type.startsWith('step.')) return;
    const seen = new Set([body.runId]);
    for (
      let id = this.parentOf(body.runId);
      id !== undefined && !seen.has(id);
      id = this.parentOf(id)
    ) {
      seen.add(id);
      this.write(id, body);
    }
  }

  private write(runId: string, body: RunEventBody): void {
    let log = this.logs.get(runId);
    if (log === undefined) this.logs.set(runId, (log = new FeedLog()));
    this.resting.delete(runId);
    const event = { ...body, id: String(++log.seq) } as StoredFeedEvent;
    log.events.push(event);
    if (log.events.length > this.limits.eventsPerRun) log.events.shift();
    for (const feed of [...log.followers]) feed.push(event);
    if (body.runId === runId && body.type === 'run.ended') this.rest(runId);
  }

  private rest(runId: string): void {
    this.resting.delete(runId);
    this.resting.add(runId);
    const followed: string[] = [];
    while (this.resting.size > this.limits.restingRuns) {
      const oldest = this.resting.values().next().value as string;
      this.resting.delete(oldest);
      // A log someone still follows stays (and may go later) until they stop.
      if ((this.logs.get(oldest)?.followers.size ?? 0) > 0) followed.push(oldest);
      else this.logs.delete(oldest);
    }
    for (const runId of followed) this.resting.add(runId);
  }
}
