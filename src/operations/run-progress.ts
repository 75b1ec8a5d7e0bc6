/**
 * Telling an observer how runs go, from their feeds: the CLI's progress (a run started or
 * signalled with an `observer`). A teller reads a run's feed until the run rests (it ends or
 * waits), telling the observer each event; whoever waits for the run then waits for its teller
 * too ({@link RunProgress.caughtUp}), so that every step is told before the outcome is.
 */
import type { EngineObserver } from '../engine/engine-options.js';
import { settles, tellObserver } from '../run-backend/run-feed-event.js';
import type { RunFeed } from '../run-backend/run-feed.js';

/** How long a wait gives a teller to catch up with a run that rests, at most. */
const CATCH_UP_MS = 2000;

/** See the module comment. */
export class RunProgress {
  /** Tellers under way, by run: each resolves once its run rests, or its feed ends. */
  private readonly tellers = new Map<string, Promise<void>>();

  /**
   * Tells `observer` the events of `feed` until the run rests. With `afterState`, the `run.state`
   * the feed begins with does not count: the teller waits for the run to rest again (a run
   * signalled while it waits).
   */
  tell(feed: RunFeed, observer: EngineObserver, afterState = false): void {
    const runId = feed.runId;
    const teller = (async () => {
      for await (const event of feed) {
        try {
          tellObserver(event, observer);
        } catch {
          // An observer's failure is its own: the run goes on, and so does the telling.
        }
        if (settles(event, runId) && !(afterState && event.type === 'run.state')) break;
      }
    })()
      .catch(() => {
        // A feed that failed tells no more; the run's outcome is still told by whoever waits.
      })
      .finally(() => {
        if (this.tellers.get(runId) === teller) this.tellers.delete(runId);
      });
    this.tellers.set(runId, teller);
  }

  /** Resolves once `runId`'s teller has told the run resting (within {@link CATCH_UP_MS}). */
  async caughtUp(runId: string): Promise<void> {
    const teller = this.tellers.get(runId);
    if (teller === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CATCH_UP_MS);
    });
    try {
      await Promise.race([teller, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}
