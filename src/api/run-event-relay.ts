/**
 * A run's event feed as server-sent events: `run.state` (the record) first, then `run.started`,
 * `step.started`, `step.retrying`, `step.ended`, `run.waiting` as they happen, and `run.ended`
 * (the record) last, after which the stream ends. Step events of child runs are passed on too
 * (their `runId` says whose). Each event's SSE id is its id in the feed, so a client that lost
 * the connection resumes with `Last-Event-ID` where it left off.
 */
import type { RunFeedEvent } from '../run-backend/run-feed-event.js';
import type { RunFeed } from '../run-backend/run-feed.js';
import type { SseStream } from './sse-stream.js';

const ENDED = new Set(['completed', 'failed', 'cancelled']);

/** Sends `feed` on `stream` until either ends; resolves then. */
export async function relayRunEvents(feed: RunFeed, stream: SseStream): Promise<void> {
  stream.onClose(() => feed.close());
  try {
    for await (const event of feed) {
      if (stream.isEnded) break;
      send(event, stream);
    }
  } catch (err) {
    stream.comment(`the feed failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    stream.end();
  }
}

/** One feed event as its SSE event: the event's fields, but for the record-carrying ones. */
function send(event: RunFeedEvent, stream: SseStream): void {
  switch (event.type) {
    case 'run.state':
      stream.send('run.state', event.record, event.id);
      // A run that has ended ends the stream as a live one would.
      if (ENDED.has(event.record.status)) stream.send('run.ended', event.record, event.id);
      return;
    case 'run.ended':
      return stream.send('run.ended', event.record, event.id);
    default: {
      const { type, id, ...data } = event;
      return stream.send(type, data, id);
    }
  }
}
