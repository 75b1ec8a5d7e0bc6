import type { StorableRun } from './run-host.js';
import type { StoredRun } from './run-store.js';

/** Run statuses that end a run: it is never resumed, so its machine's snapshot is not kept. */
const ENDED = new Set(['completed', 'failed', 'cancelled']);

/**
 * What a run store keeps of `run`, a run of the project at `projectDir`. An ended run keeps no
 * snapshot (`null`): only a running or waiting run is ever resumed from one.
 */
export function toStoredRun(run: StorableRun, projectDir: string): StoredRun {
  return {
    record: run.record,
    snapshot: ENDED.has(run.record.status) ? null : run.persistedSnapshot(),
    source: { file: run.loaded.file, text: run.loaded.text },
    projectDir,
    depth: run.lineage.depth,
    parentRunId: run.lineage.parentRunId,
    children: run.children,
    steps: run.steps,
    counters: run.counters,
    ...(run.trace && { trace: run.trace }),
    ...(run.toolHashes && { tools: run.toolHashes }),
  };
}
