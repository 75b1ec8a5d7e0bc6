/**
 * A run's feed as one consumer follows it: an async iterable of {@link RunFeedEvent}s that a
 * backend pushes into as they arrive, in order, and that ends after the run's last event
 * (`run.ended`, or a `run.state` of an ended run). The consumer reads at its own pace (events
 * wait in the feed's buffer), and ends it early with `close()` or by leaving a `for await` loop.
 *
 * ```ts
 * const feed = await dirigent.watch(runId);
 * for await (const event of feed) console.log(event.type, event.runId);
 * ```
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ends, type RunFeedEvent } from './run-feed-event.js';

/** Where a feed starts when given this as `after`: its first event (nothing of it is skipped). */
export const FEED_START = '0';

/** How to follow a run's feed. */
export interface FollowOptions {
  /**
   * Go on after this event id (the last one seen; server-sent events' `Last-Event-ID`), without
   * the `run.state` that otherwise comes first; {@link FEED_START} for the whole feed. An id the
   * feed no longer holds gives `run.state` and what follows it.
   */
  after?: string;
}

/** See the module comment. */
export class RunFeed implements AsyncIterableIterator<RunFeedEvent> {
  private readonly buffer: RunFeedEvent[] = [];
  private reader: ((result: IteratorResult<RunFeedEvent>) => void) | undefined;
  private failWith: ((error: unknown) => void) | undefined;
  private error: unknown;
  private done = false;
  private readonly closers: (() => void)[] = [];

  /** `runId`: the run followed (its `run.ended` ends the feed). */
  constructor(readonly runId: string) {}

  /** Whether the feed has ended (its run ended, it failed, or it was closed). */
  get isDone(): boolean {
    return this.done;
  }

  /** Calls `fn` once when the feed ends, however it ends (a backend unsubscribes here). */
  onClose(fn: () => void): void {
    if (this.done) fn();
    else this.closers.push(fn);
  }

  /** Adds an event; after the run's last event the feed ends. Nothing is added once it ended. */
  push(event: RunFeedEvent): void {
    if (this.done) return;
    if (this.reader !== undefined) {
      const read = this.reader;
      this.reader = undefined;
      this.failWith = undefined;
      read({ value: event, done: false });
    } else this.buffer.push(event);
    if (ends(event, this.runId)) this.finish();
  }

  /** Ends the feed with `error`: a consumer's next read rejects with it. */
  fail(error: unknown): void {
    if (this.done) return;
    this.error = DirigentError.from(error);
    if (this.failWith !== undefined) {
      const fail = this.failWith;
      this.reader = undefined;
      this.failWith = undefined;
      fail(this.error);
    }
    this.finish();
  }

  /** Stops following: what is buffered is dropped, the backend stops pushing. */
  close(): void {
    this.buffer.length = 0;
    this.finish();
    if (this.reader !== undefined) {
      const read = this.reader;
      this.reader = undefined;
      this.failWith = undefined;
      read({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<RunFeedEvent>> {
    const event = this.buffer.shift();
    if (event !== undefined) return Promise.resolve({ value: event, done: false });
    if (this.error !== undefined) {
      const error = this.error;
      this.error = undefined;
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.reader = resolve;
      this.failWith = reject;
    });
  }

  return(): Promise<IteratorResult<RunFeedEvent>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): RunFeed {
    return this;
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    for (const fn of this.closers.splice(0)) {
      try {
        fn();
      } catch {
        // a closer's failure is its own: the feed has ended either way
      }
    }
  }
}
