import type { RunRecord } from './run-record.js';
import type { RunStore, StoredRun } from './run-store.js';

/**
 * Keeps runs in this process only, as JSON text: a saved run is a copy, as in any other store,
 * so callers cannot alias stored data (and JSON is cheaper than a structured clone).
 */
export class MemoryRunStore implements RunStore {
  private readonly runs = new Map<string, { text: string; startedAt: number }>();

  save(run: StoredRun): Promise<void> {
    this.runs.set(run.record.runId, { text: JSON.stringify(run), startedAt: run.record.startedAt });
    return Promise.resolve();
  }

  load(runId: string): Promise<StoredRun | undefined> {
    const run = this.runs.get(runId);
    return Promise.resolve(run && (JSON.parse(run.text) as StoredRun));
  }

  list(): Promise<RunRecord[]> {
    const newest = [...this.runs.values()].sort((a, b) => b.startedAt - a.startedAt);
    return Promise.resolve(newest.map((r) => (JSON.parse(r.text) as StoredRun).record));
  }
}
