/**
 * How long this process's event loop has lately been held up at once: a worker whose event loop
 * stalls (CPU starved, a long collection, a long synchronous task) renews its lease late, so its
 * lease must cover the stalls it has seen (see `lease-renewer.ts`). Measured as the renewals are
 * delayed: by how late a timer of the event loop fires (every 50 ms, it costs next to nothing),
 * kept per ten seconds for a minute.
 */

/** How often the event loop is sampled, ms. */
const RESOLUTION_MS = 50;
/**
 * Stalls in the first seconds are not counted: a worker that starts loads its project and makes
 * its parts at once, which holds the event loop once, not again.
 */
const WARM_UP_MS = 5_000;
/** How long a stall is remembered, ms. */
const MEMORY_MS = 60_000;
/** The stalls are kept per this many ms. */
const BUCKET_MS = 10_000;

/** The longest stalls of this process's event loop over the last minute. */
export class EventLoopStalls {
  private readonly timer: NodeJS.Timeout;
  private last = performance.now();
  private readonly countFrom: number;
  /** The longest stall of each bucket (start time → ms), the last minute's. */
  private readonly buckets = new Map<number, number>();

  /** `warmUpMs`: stalls in the first this many ms are not counted (default 5 s). */
  constructor(warmUpMs = WARM_UP_MS) {
    this.countFrom = this.last + warmUpMs;
    this.timer = setInterval(() => this.sample(), RESOLUTION_MS);
    this.timer.unref();
  }

  /** The longest stall of the event loop over the last minute, ms (0 when none was seen). */
  longestMs(now = Date.now()): number {
    this.sample(); // a stall under way (this very call may come late) counts too
    let longest = 0;
    for (const [at, ms] of this.buckets) {
      if (at <= now - MEMORY_MS) this.buckets.delete(at);
      else longest = Math.max(longest, ms);
    }
    return longest;
  }

  /** Stops sampling. */
  stop(): void {
    clearInterval(this.timer);
  }

  private sample(): void {
    const at = performance.now();
    const stall = at - this.last - RESOLUTION_MS;
    this.last = at;
    if (stall <= RESOLUTION_MS || at < this.countFrom) return; // a timer a little late is no stall
    const now = Date.now();
    const bucket = now - (now % BUCKET_MS);
    this.buckets.set(bucket, Math.max(this.buckets.get(bucket) ?? 0, stall));
  }
}
