import type { EngineObserver } from '../engine/engine-options.js';

/**
 * One engine observer for many watchers: each subscribes to a run, and hears of it and of the child
 * runs it starts (`parentOf` names the parent of a live child run).
 */
export class ObserverHub {
  private readonly watchers = new Map<string, Set<EngineObserver>>();

  constructor(private readonly parentOf: (runId: string) => string | undefined) {}

  /** Subscribes `observer` to `runId`; the returned function ends it. */
  add(runId: string, observer: EngineObserver): () => void {
    let set = this.watchers.get(runId);
    if (set === undefined) this.watchers.set(runId, (set = new Set()));
    set.add(observer);
    return () => {
      set.delete(observer);
      if (set.size === 0) this.watchers.delete(runId);
    };
  }

  /** The observer to give the engine. */
  readonly observer: EngineObserver = {
    stepStarted: (runId, ...rest) => this.each(runId, (o) => o.stepStarted?.(runId, ...rest)),
    stepEnded: (runId, entry) => this.each(runId, (o) => o.stepEnded?.(runId, entry)),
    stepRetrying: (runId, ...rest) => this.each(runId, (o) => o.stepRetrying?.(runId, ...rest)),
    runWaiting: (runId, waiting) => this.each(runId, (o) => o.runWaiting?.(runId, waiting)),
    runEnded: (record) => this.each(record.runId, (o) => o.runEnded?.(record)),
    storeFailed: (runId, error) => this.each(runId, (o) => o.storeFailed?.(runId, error)),
  };

  private each(runId: string, call: (o: EngineObserver) => void): void {
    if (this.watchers.size === 0) return;
    const seen = new Set<string>();
    for (
      let id: string | undefined = runId;
      id !== undefined && !seen.has(id);
      id = this.parentOf(id)
    ) {
      seen.add(id);
      for (const o of this.watchers.get(id) ?? []) {
        try {
          call(o);
        } catch {
          // a watcher's failure is its own
        }
      }
    }
  }
}
