import { ActiveRun } from './active-run.js';
import type { DirectiveLoader, LoadedDirective } from './directive-loader.js';
import { ENGINE_DEFAULTS } from './engine-options.js';
import type { RunHost } from './run-host.js';
import type { RunLineage } from './run-lineage.js';
import type { StoredRun } from './run-store.js';
import { runNotWaiting } from '../errors/run-errors.js';

/**
 * A stored run built again in this process, following the directive text it started with (not
 * yet begun): a waiting one, or with `interrupted` also a running one whose process stopped.
 * Any other rejects with `RUN_NOT_WAITING`.
 */
export function restoredRun(
  host: RunHost,
  loader: DirectiveLoader,
  runId: string,
  stored: StoredRun,
  interrupted: boolean,
): ActiveRun {
  const status = stored.record.status;
  if (status !== 'waiting' && status !== 'paused' && !(interrupted && status === 'running')) {
    throw runNotWaiting(runId, status, interrupted ? 'resume-interrupted' : 'resume');
  }
  const loaded = storedDirective(loader, stored);
  const lineage: RunLineage = {
    depth: stored.depth,
    maxDepth: loaded.compiled.directive.limits.depth ?? ENGINE_DEFAULTS.depth,
    parentRunId: stored.parentRunId,
  };
  return new ActiveRun(host, loaded, lineage, runId, { stored });
}

/** The directive a stored run follows: the text it started with, as a file of this project. */
export function storedDirective(loader: DirectiveLoader, stored: StoredRun): LoadedDirective {
  // The file another machine stored is this project's, where it keeps its directives.
  return loader.fromText(
    loader.localFile(stored.source.file, stored.record.directive),
    stored.source.text,
  );
}
