/**
 * The {@link ChangeSource} of an embedded project: the runs live in this process (their records
 * in memory), and the files of `.dirigent/runs/`, which other processes (`dirigent run`,
 * `dirigent signal`) write too. Every save there renames a file into the folder, so the folder's
 * modification time says whether to look at the files at all; then only files changed since the
 * look before are read.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine } from '../engine/engine.js';
import type { FileRunStore } from '../engine/file-run-store.js';
import type { RunRecord } from '../engine/run-record.js';
import {
  SeenRuns,
  summaryOf,
  type ChangeSource,
  type RunSummary,
} from '../run-backend/run-changes.js';
import { ignoreMissing } from '../errors/ignore-expected.js';

/** Filesystems with coarse times: a file written this long before the last look is read again. */
const SLACK_MS = 2000;

/** See the module comment. */
export class EmbeddedRunChanges implements ChangeSource {
  private readonly seen = new SeenRuns();
  private folderTime = -1;
  private lastLook = 0;

  constructor(
    private readonly engine: Engine,
    private readonly store: FileRunStore,
  ) {}

  async poll(): Promise<RunSummary[]> {
    const records = new Map<string, RunRecord>();
    for (const run of this.engine.activeRuns()) records.set(run.runId, run.record);
    // The first look is the baseline: files written before it are no change.
    const since = this.lastLook === 0 ? Infinity : this.lastLook - SLACK_MS;
    this.lastLook = Date.now();
    for (const record of await this.changedFiles(since))
      if (!records.has(record.runId)) records.set(record.runId, record);
    // A run seen under way that is no longer live has ended (or waits) in its file.
    for (const runId of this.seen.unended())
      if (!records.has(runId)) {
        const record = (await this.store.load(runId))?.record;
        if (record !== undefined) records.set(runId, record);
      }
    const changed = this.seen.update([...records.values()]);
    this.seen.prune(Date.now() - 60_000);
    return changed.map((id) => summaryOf(records.get(id)!));
  }

  /** Records of the run files written since `since` (epoch ms), if the folder changed at all. */
  private async changedFiles(since: number): Promise<RunRecord[]> {
    const time = (await stat(this.store.dir).catch(ignoreMissing))?.mtimeMs ?? -1;
    const same = time === this.folderTime;
    this.folderTime = time;
    if (since === Infinity || (same && time < since)) return [];
    const names = (await readdir(this.store.dir).catch(ignoreMissing)) ?? [];
    const out: RunRecord[] = [];
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const at = (await stat(join(this.store.dir, name)).catch(ignoreMissing))?.mtimeMs ?? 0;
      if (at < since) continue;
      const stored = await this.store.load(name.slice(0, -5)).catch(() => {
        /* Removed or being replaced: the next poll reads the run again. */
        return undefined;
      });
      const record = stored?.record;
      if (record !== undefined) out.push(record);
    }
    return out;
  }
}
