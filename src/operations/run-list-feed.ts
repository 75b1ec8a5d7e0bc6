/**
 * Runs as they change, for lists that stay up to date (the console's run list, over server-sent
 * events): one poller per {@link Dirigent}, shared by every subscriber, asks the backend's
 * {@link ChangeSource} every `intervalMs` for the runs that are new or changed status, and tells
 * each subscriber in one batch. It runs only while someone listens; what the first look finds is
 * the baseline, not a change (a subscriber lists runs itself after subscribing).
 *
 * Not to be confused with a run's event feed (`run-backend/run-event-feed.ts`), which tells the
 * steps of one run in order.
 */
import type { ChangeSource, RunSummary } from '../run-backend/run-changes.js';

/** Called with each batch of changed runs. */
export type RunListListener = (changes: RunSummary[]) => void;

/** See the module comment. */
export class RunListFeed {
  private readonly listeners = new Set<RunListListener>();
  private timer: NodeJS.Timeout | undefined;
  private source: ChangeSource | undefined;

  constructor(
    private readonly open: () => ChangeSource,
    private readonly intervalMs = 500,
  ) {}

  /** Tells `listener` of every batch of changes until the returned function is called. */
  subscribe(listener: RunListListener): () => void {
    this.listeners.add(listener);
    if (this.source === undefined) {
      const source = (this.source = this.open());
      void this.look(source);
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size > 0) return;
      clearTimeout(this.timer);
      this.source = undefined;
    };
  }

  private async look(source: ChangeSource): Promise<void> {
    // A failed look (Redis away) tells nothing; the next one finds what changed meanwhile.
    const changes = await source.poll().catch(() => []);
    if (this.source !== source) return;
    if (changes.length > 0)
      for (const listener of this.listeners) {
        try {
          listener(changes);
        } catch {
          // a listener's failure is its own
        }
      }
    this.timer = setTimeout(() => void this.look(source), this.intervalMs);
    this.timer.unref();
  }
}
