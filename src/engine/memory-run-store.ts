import type { RunRecord } from './run-record.js';
import type { RunStore, StoredRun } from './run-store.js';

/** Keeps runs in this process only (structured clones, so callers cannot alias stored data). */
export class MemoryRunStore implements RunStore {
  private readonly runs = new Map<string, StoredRun>();

  save(run: StoredRun): Promise<void> {
    this.runs.set(run.record.runId, structuredClone(run));
    return Promise.resolve();
  }

  load(runId: string): Promise<StoredRun | undefined> {
    const run = this.runs.get(runId);
    return Promise.resolve(run && structuredClone(run));
  }

  list(): Promise<RunRecord[]> {
    return Promise.resolve(
      [...this.runs.values()]
        .map((r) => structuredClone(r.record))
        .sort((a, b) => b.startedAt - a.startedAt),
    );
  }
}
