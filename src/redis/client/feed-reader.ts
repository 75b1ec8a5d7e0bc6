/**
 * Reading the event feeds of runs on a Redis deployment (see `run-backend/run-feed-event.ts`):
 * each run's feed is a list its drivers append to in the same script as the run's state, its nth
 * event having id n (`run-store/pending-events.ts`), and every such write is told on a channel
 * named as the list. One subscriber connection per process listens on the channels of the runs
 * followed here; a message sends each follower of that run to read what it has not read yet.
 * Since the list keeps the events, a message lost (the connection went away for a moment) loses
 * nothing: the next message, or the catch-up every {@link CATCH_UP_MS}, reads them.
 */
import { duplicateOf } from '../redis-connection.js';
import type { RedisClient } from '../redis-client.js';
import type { RunRecord } from '../../engine/run-record.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import type { StoredFeedEvent } from '../../run-backend/run-feed-event.js';
import { FEED_START, RunFeed, type FollowOptions } from '../../run-backend/run-feed.js';
import type { RedisRunStore } from '../run-store/redis-run-store.js';

/** How often every follower reads its feed, whatever it heard: the fallback of the channel. */
export const CATCH_UP_MS = 5000;

/** Events read at a time. */
const PAGE = 500;

/** One follower of one run's feed. */
interface Follower {
  feed: RunFeed;
  runId: string;
  /** The id of the last event read. */
  position: number;
  /** A read is under way; `again`: read once more when it is over (something came meanwhile). */
  reading: boolean;
  again: boolean;
}

/** See the module comment. */
export class FeedReader {
  private subscriber: RedisClient | undefined;
  /** Followers by channel (= the feed's key). */
  private readonly followers = new Map<string, Set<Follower>>();
  private catchUp: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly store: RedisRunStore,
    /** The record of a run not stored yet: `queued` while its start waits, else `RUN_NOT_FOUND`. */
    private readonly unstored: (runId: string) => Promise<RunRecord>,
  ) {}

  /**
   * Follows `runId`'s feed: `run.state` with the record and the position it stands at, then every
   * event after it; with `after`, the events after that id, or `run.state` first when the feed no
   * longer holds them all. Resolves once subscribed.
   */
  async follow(runId: string, options: FollowOptions = {}): Promise<RunFeed> {
    const feed = new RunFeed(runId);
    const after = options.after === undefined ? undefined : idOf(options.after);
    const follower: Follower = { feed, runId, position: 0, reading: false, again: false };
    if (after === 0) {
      // The whole feed, of a run that exists (a run not stored yet may be queued).
      if ((await this.store.readFollowed(runId)) === undefined) await this.unstored(runId);
    } else if (after === undefined || !(await this.holds(runId, after))) {
      if (!(await this.sendState(follower))) return feed;
    } else follower.position = after;
    await this.listen(follower);
    // What was written before the subscription took effect is read now.
    void this.read(follower);
    return feed;
  }

  /** Stops every follower and closes the subscriber connection. */
  close(): void {
    for (const set of this.followers.values()) for (const f of set) f.feed.close();
    this.subscriber?.disconnect();
    this.subscriber = undefined;
    clearInterval(this.catchUp);
  }

  /** Whether the run's feed still holds its events after id `after`. */
  private async holds(runId: string, after: number): Promise<boolean> {
    return (await this.store.readFeed(runId, after, 0)).outcome === 'ok';
  }

  /**
   * Pushes the run's record as `run.state`, and makes the follower go on from the position the
   * record stands at; false when that ended the feed (the run has ended).
   */
  private async sendState(f: Follower): Promise<boolean> {
    const read = await this.store.readFollowed(f.runId);
    const record = read?.run.record ?? (await this.unstored(f.runId));
    f.position = Number(read?.position ?? FEED_START);
    const id = String(f.position);
    f.feed.push({ type: 'run.state', id, runId: f.runId, at: Date.now(), record });
    return !f.feed.isDone;
  }

  private async listen(follower: Follower): Promise<void> {
    const key = this.store.feedKey(follower.runId);
    const sub = this.subscribed();
    let set = this.followers.get(key);
    if (set === undefined) {
      this.followers.set(key, (set = new Set()));
      await sub.subscribe(key);
    }
    set.add(follower);
    follower.feed.onClose(() => {
      set.delete(follower);
      if (set.size > 0 || this.followers.get(key) !== set) return;
      this.followers.delete(key);
      void sub.unsubscribe(key).catch(() => {
        // The connection went away: nothing to unsubscribe from.
      });
    });
  }

  /** The subscriber connection, made on first use. */
  private subscribed(): RedisClient {
    if (this.subscriber !== undefined) return this.subscriber;
    const sub = (this.subscriber = duplicateOf(this.redis));
    sub.on('message', (channel: string) => {
      for (const f of this.followers.get(channel) ?? []) void this.read(f);
    });
    // Back after a lost connection (ioredis subscribes again): what was told meanwhile is read.
    sub.on('ready', () => this.readAll());
    sub.on('error', () => {
      // ioredis reconnects by itself; the catch-up reads what the channel missed meanwhile.
    });
    this.catchUp = setInterval(() => this.readAll(), CATCH_UP_MS);
    this.catchUp.unref();
    return sub;
  }

  private readAll(): void {
    for (const set of this.followers.values()) for (const f of set) void this.read(f);
  }

  /** Reads what the follower has not read yet, and pushes it into its feed. */
  private async read(f: Follower): Promise<void> {
    if (f.reading) {
      f.again = true;
      return;
    }
    f.reading = true;
    try {
      do {
        f.again = false;
        for (;;) {
          if (f.feed.isDone) return;
          const page = await this.store.readFeed(f.runId, f.position, PAGE);
          // Trimmed past what this follower read (it read too slowly), or the run is gone: the
          // record says how it stands now.
          if (page.outcome !== 'ok') {
            if (!(await this.sendState(f))) return;
            continue;
          }
          for (const json of page.events) f.feed.push(eventOf(++f.position, json, f.runId));
          if (f.position >= page.last || page.events.length === 0) break;
        }
      } while (f.again);
    } catch (err) {
      // Redis away: the catch-up tries again. An entry that is not an event ends the feed.
      if (err instanceof DirigentError) f.feed.fail(err);
    } finally {
      f.reading = false;
    }
  }
}

/** The id a consumer gives (`Last-Event-ID`), as a number, or undefined when it is not one. */
function idOf(id: string): number | undefined {
  return /^\d{1,15}$/.test(id) ? Number(id) : undefined;
}

/** The event `id` of a feed, from its JSON. */
function eventOf(id: number, json: string, runId: string): StoredFeedEvent {
  try {
    return {
      ...(JSON.parse(json) as Omit<StoredFeedEvent, 'id'>),
      id: String(id),
    } as StoredFeedEvent;
  } catch (err) {
    throw DirigentError.fatal(
      ErrorCode.INTERNAL,
      `Event ${id} of run ${runId}'s feed is not an event Dirigent wrote: ${(err as Error).message}`,
      { hint: 'A key of the deployment was written by something else; check the key prefix.' },
    );
  }
}
