/**
 * Prunes a store when the runs it ended expire. Every save retires two expired runs' index entries
 * as it goes (see the save script), which keeps the indexes flat while runs are saved; once they
 * stop, the last runs to end would leave their index entries, their directive's text and their
 * jobs behind. A store that saves an ended run therefore keeps one timer, at the earliest expiry
 * it knows of (at most an hour away), and prunes when it fires: what has expired leaves Redis
 * within about a second of its retention, or within the hour for what this store did not end.
 * The timer never holds the process open, and stops once the store's connection has ended.
 */

/** The longest the sweeper waits between two prunes while ended runs are kept, ms. */
export const SWEEP_EVERY_MS = 3_600_000;
/** How long after an expiry the prune runs: Redis expires keys on its own clock, ms. */
const AFTER_EXPIRY_MS = 1000;

/** What the sweeper acts through. */
export interface SweptStore {
  /** Prunes what has expired (see `RedisRunStore.prune`). */
  prune(): Promise<unknown>;
  /** The earliest expiry still to come (epoch ms), or undefined when nothing is kept. */
  nextExpiry(): Promise<number | undefined>;
  /** Whether the store's connection is still usable. */
  isOpen(): boolean;
}

/** See the module comment. */
export class ExpirySweeper {
  private timer: NodeJS.Timeout | undefined;
  private at = Infinity;

  constructor(private readonly store: SweptStore) {}

  /** A run this store saved expires at `atMs` (epoch ms): prune then, or sooner. */
  expires(atMs: number): void {
    const at = Math.min(atMs + AFTER_EXPIRY_MS, Date.now() + SWEEP_EVERY_MS);
    if (at >= this.at) return;
    clearTimeout(this.timer);
    this.at = at;
    this.timer = setTimeout(() => void this.sweep(), Math.max(0, at - Date.now()));
    this.timer.unref();
  }

  /** Stops the timer (nothing is pruned until the next ended run). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.at = Infinity;
  }

  private async sweep(): Promise<void> {
    this.stop();
    if (!this.store.isOpen()) return;
    try {
      await this.store.prune();
      const next = await this.store.nextExpiry();
      if (next !== undefined) this.expires(next);
    } catch {
      // Redis away or closing: the next ended run arms the sweeper again, and saves retire
      // expired runs meanwhile.
    }
  }
}
