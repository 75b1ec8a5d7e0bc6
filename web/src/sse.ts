/**
 * Server-sent events read with `fetch` (an EventSource cannot send the Authorization header),
 * parsed by eventsource-parser. A stream that ends or breaks is opened again after a pause,
 * unless it was closed here or `reconnect` says not to; opened again, it sends the id of the last
 * event it read (`Last-Event-ID`), so a run's feed goes on where it left off. A stream can also be
 * opened `after` an event read by an earlier one (a run's feed followed again once it goes on).
 */
import { createParser } from 'eventsource-parser';
import { authHeaders, signInNeeded } from './api';

/** One event of a stream. */
export interface StreamEvent {
  event: string;
  data: unknown;
  /** The event's id in its stream, when it has one. */
  id?: string;
}

/** How {@link openStream} goes on. */
export interface StreamOptions {
  onEvent(e: StreamEvent): void;
  /** After the server ended the stream: open it again? (default yes) */
  reconnect?: () => boolean;
  /** Open it after this event id (sent as `Last-Event-ID`), as a reconnection would. */
  after?: string;
}

/** Reads the event stream at `path` until the returned function is called. */
export function openStream(path: string, options: StreamOptions): () => void {
  const controller = new AbortController();
  let pause = 500;
  let lastId: string | undefined = options.after;
  const read = async (): Promise<void> => {
    try {
      const res = await fetch(path, {
        headers: {
          accept: 'text/event-stream',
          ...authHeaders(),
          ...(lastId !== undefined && { 'last-event-id': lastId }),
        },
        signal: controller.signal,
      });
      if (res.status === 401) {
        signInNeeded.value = true;
        return;
      }
      if (!res.ok || res.body === null) throw new Error(`HTTP ${res.status}`);
      pause = 500;
      const parser = createParser({
        onEvent: (e) => {
          if (e.id !== undefined) lastId = e.id;
          options.onEvent({
            event: e.event ?? 'message',
            data: JSON.parse(e.data),
            ...(e.id !== undefined && { id: e.id }),
          });
        },
      });
      const decoder = new TextDecoder();
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
      if (options.reconnect && !options.reconnect()) return;
    } catch {
      if (controller.signal.aborted) return;
      pause = Math.min(pause * 2, 10_000);
    }
    if (!controller.signal.aborted) setTimeout(() => void read(), pause);
  };
  void read();
  return () => controller.abort();
}
