import type { StorableRun } from './run-host.js';
import type { StoredRun } from './run-store.js';

/** What a run store keeps of `run`, a run of the project at `projectDir`. */
export function toStoredRun(run: StorableRun, projectDir: string): StoredRun {
  const redrivePoint = run.redrivePoint();
  return {
    record: run.record,
    snapshot: run.persistedSnapshot(),
    source: {
      file: run.loaded.file,
      text: run.loaded.text,
      hash: run.loaded.compiled.directive.source.hash,
    },
    projectDir,
    depth: run.lineage.depth,
    parentRunId: run.lineage.parentRunId,
    children: run.children,
    steps: run.steps,
    counters: run.counters,
    ...(run.trace && { trace: run.trace }),
    ...(run.toolHashes && { tools: run.toolHashes }),
    ...(redrivePoint !== undefined && { redrivePoint }),
  };
}
