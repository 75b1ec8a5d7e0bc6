import type { RunRecord } from './run-record.js';
import type { RunStore, StoredRun } from './run-store.js';

/**
 * Keeps runs in this process only. Saving keeps a reference (a run saves at every wait and at its
 * end, and copying a long run's record each time costs more than the run's steps); loading hands
 * out a copy, so callers never alias what is stored. The engine only loads runs that are not live
 * (ended, or released while waiting), whose objects no longer change.
 */
export class MemoryRunStore implements RunStore {
  private readonly runs = new Map<string, StoredRun>();

  save(run: StoredRun): Promise<void> {
    this.runs.set(run.record.runId, run);
    return Promise.resolve();
  }

  load(runId: string): Promise<StoredRun | undefined> {
    const run = this.runs.get(runId);
    return Promise.resolve(run && structuredClone(run));
  }

  list(): Promise<RunRecord[]> {
    const newest = [...this.runs.values()].sort((a, b) => b.record.startedAt - a.record.startedAt);
    return Promise.resolve(newest.map((r) => structuredClone(r.record)));
  }
}
