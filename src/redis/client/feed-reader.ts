/**
 * Reading the event feeds of runs on a Redis deployment (see `run-backend/run-feed-event.ts`):
 * each run's feed is a stream its drivers append to in the same script as the run's state
 * (`run-store/pending-events.ts`), and every such write is told on a channel named as the
 * stream. One subscriber connection per process listens on the channels of the runs followed
 * here; a message sends each follower of that run to read what it has not read yet (`XRANGE`
 * after its position). Since the stream keeps the events, a message lost (the connection went
 * away for a moment) loses nothing: the next message, or the catch-up every
 * {@link CATCH_UP_MS}, reads them.
 */
import type { Redis } from 'ioredis';
import type { RunRecord } from '../../engine/run-record.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import type { RunFeedEvent, StoredFeedEvent } from '../../run-backend/run-feed-event.js';
import { FEED_START, RunFeed, type FollowOptions } from '../../run-backend/run-feed.js';
import type { RedisRunStore } from '../run-store/redis-run-store.js';

/** How often every follower reads its feed, whatever it heard: the fallback of the channel. */
export const CATCH_UP_MS = 5000;

/** Entries read per `XRANGE`. */
const PAGE = 500;

/** A stream id, as Redis gives it. */
const STREAM_ID = /^\d+-\d+$/;

/** One follower of one run's feed. */
interface Follower {
  feed: RunFeed;
  key: string;
  /** The id of the last entry read. */
  position: string;
  /** A read is under way; `again`: read once more when it is over (something came meanwhile). */
  reading: boolean;
  again: boolean;
}

/** See the module comment. */
export class FeedReader {
  private subscriber: Redis | undefined;
  /** Followers by channel (= stream key). */
  private readonly followers = new Map<string, Set<Follower>>();
  private catchUp: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: Redis,
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
    const key = this.store.feedKey(runId);
    const feed = new RunFeed(runId);
    let position = options.after;
    if (position === undefined || !(await this.holdsAfter(key, position))) {
      const read = await this.store.readFollowed(runId);
      const record = read?.run.record ?? (await this.unstored(runId));
      position = read?.position ?? FEED_START;
      feed.push({ type: 'run.state', id: position, runId, at: Date.now(), record });
      if (feed.isDone) return feed;
    }
    const follower: Follower = { feed, key, position, reading: false, again: false };
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

  /** Whether the feed at `key` still holds every entry after id `after`. */
  private async holdsAfter(key: string, after: string): Promise<boolean> {
    if (after === FEED_START) return true;
    if (!STREAM_ID.test(after)) return false;
    const [first] = await this.redis.xrange(key, '-', '+', 'COUNT', 1);
    // Ids leave gaps, so only `after` itself still there proves nothing after it was dropped.
    return first !== undefined && !isAfter(first[0], after);
  }

  private async listen(follower: Follower): Promise<void> {
    const sub = this.subscribed();
    let set = this.followers.get(follower.key);
    if (set === undefined) {
      this.followers.set(follower.key, (set = new Set()));
      await sub.subscribe(follower.key);
    }
    set.add(follower);
    follower.feed.onClose(() => {
      set.delete(follower);
      if (set.size > 0 || this.followers.get(follower.key) !== set) return;
      this.followers.delete(follower.key);
      void sub.unsubscribe(follower.key).catch(() => {
        // The connection went away: nothing to unsubscribe from.
      });
    });
  }

  /** The subscriber connection, made on first use. */
  private subscribed(): Redis {
    if (this.subscriber !== undefined) return this.subscriber;
    const sub = (this.subscriber = this.redis.duplicate());
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
        let entries: [string, string[]][];
        do {
          if (f.feed.isDone) return;
          entries = await this.redis.xrange(f.key, `(${f.position}`, '+', 'COUNT', PAGE);
          for (const [id, fields] of entries) {
            f.position = id;
            f.feed.push(eventOf(id, fields));
          }
        } while (entries.length === PAGE);
      } while (f.again);
    } catch (err) {
      // Redis away: the catch-up tries again; an entry that cannot be read ends the feed.
      if (err instanceof SyntaxError) f.feed.fail(unreadable(f.key, err));
    } finally {
      f.reading = false;
    }
  }
}

/** The feed event of a stream entry (one field `e`: the event's JSON). */
function eventOf(id: string, fields: string[]): RunFeedEvent {
  const json = fields[fields.indexOf('e') + 1] ?? '';
  return { ...(JSON.parse(json) as Omit<StoredFeedEvent, 'id'>), id } as StoredFeedEvent;
}

function unreadable(key: string, err: SyntaxError): DirigentError {
  return DirigentError.fatal(
    ErrorCode.INTERNAL,
    `An entry of the run feed ${key} is not an event Dirigent wrote: ${err.message}`,
    { hint: 'A key of the deployment was written by something else; check the key prefix.' },
  );
}

/** Whether stream id `a` comes after `b`. */
function isAfter(a: string, b: string): boolean {
  const [am, as] = a.split('-').map(BigInt);
  const [bm, bs] = b.split('-').map(BigInt);
  return am! > bm! || (am === bm && as! > bs!);
}
