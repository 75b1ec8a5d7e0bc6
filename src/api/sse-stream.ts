/**
 * One server-sent events response (text/event-stream): events with JSON data, each with an id
 * (the one given, or the next number), and a comment line every `heartbeatMs` so proxies and
 * clients see the connection alive while nothing happens. Written straight to the socket of a
 * response Fastify let go of (`hijack`).
 */
import type { ServerResponse } from 'node:http';

/** See the module comment. */
export class SseStream {
  private seq = 0;
  private ended = false;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly closers: (() => void)[] = [];

  /**
   * Sends the response's head at once. `headers` are added to the stream's own (the rate
   * limit's, say).
   */
  constructor(
    private readonly res: ServerResponse,
    options: {
      heartbeatMs: number;
      headers?: Record<string, string | number | string[] | undefined>;
    },
  ) {
    const extra = Object.entries(options.headers ?? {}).filter(([, v]) => v !== undefined);
    res.writeHead(200, {
      ...(Object.fromEntries(extra) as Record<string, string | number | string[]>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    this.heartbeat = setInterval(() => this.comment('heartbeat'), options.heartbeatMs);
    this.heartbeat.unref();
    // The client went away, or the stream was ended here: either way, stop and tell.
    res.once('close', () => this.closed());
  }

  /** Whether the stream has ended (by {@link end} or because the client went away). */
  get isEnded(): boolean {
    return this.ended;
  }

  /**
   * Sends event `event` with `data` as JSON, under `id` (what a client resumes after, with
   * `Last-Event-ID`), else the next number.
   */
  send(event: string, data: unknown, id: string = String(++this.seq)): void {
    if (this.ended) return;
    const safeId = id.replace(/[\r\n\0]/g, '');
    this.res.write(`id: ${safeId}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Sends a comment line (clients ignore it). */
  comment(text: string): void {
    if (!this.ended) this.res.write(`: ${text.replace(/[\r\n]+/g, ' ')}\n\n`);
  }

  /** Calls `fn` once when the stream ends, whichever side ends it. */
  onClose(fn: () => void): void {
    if (this.ended) fn();
    else this.closers.push(fn);
  }

  /** Ends the response. */
  end(): void {
    if (this.ended) return;
    this.res.end();
    this.closed();
  }

  private closed(): void {
    if (this.ended && this.closers.length === 0) return;
    this.ended = true;
    clearInterval(this.heartbeat);
    // The client went away (perhaps half-closing its side): the socket goes too, at once.
    if (!this.res.writableEnded) this.res.destroy();
    for (const fn of this.closers.splice(0)) {
      try {
        fn();
      } catch {
        // a closer's failure is its own
      }
    }
  }
}
