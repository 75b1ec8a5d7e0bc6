import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_RETENTION_SECONDS } from '../policy/project-policy.js';
import { hasEnded, type RunRecord } from './run-record.js';
import { runRetentionSeconds } from './run-retention.js';
import type { RunStore, StoredRun } from './run-store.js';

/** What a {@link FileRunStore} is built with. */
export interface FileRunStoreOptions {
  /**
   * Seconds a run is kept once ended, when neither its directive (`<retention days>`) nor its
   * project (`retention` in `.ai/config/dirigent.yaml`) sets one. Default: 7 days.
   */
  retentionSeconds?: number;
  /** The clock expiries are read against (tests), epoch ms. Default: `Date.now`. */
  now?: () => number;
}

/** Files a sweep looks at, at most: the work a save may add is bounded. */
export const SWEEP_FILES = 100;
/** A project's runs are swept on save at most this often, ms, whatever the processes saving. */
const SWEEP_EVERY_MS = 60_000;
/** The file whose modification time says when the project's runs were last swept. */
const SWEPT = '.swept';

/**
 * Keeps runs as JSON files in `<project>/.dirigent/runs/`, written atomically (temporary file,
 * then rename), so a waiting embedded run survives the process and `dirigent signal` can resume it.
 *
 * Ended runs are kept for their retention (see `run-retention.ts`), counted from when they ended;
 * then they are removed: a run found expired when it is loaded or listed is deleted and answered
 * as gone, and a save of an ended run sweeps up to {@link SWEEP_FILES} other files (at most once
 * a minute per project, across the processes that save: `.swept` in the folder says when), so a
 * project whose runs are never listed does not grow without bound.
 */
export class FileRunStore implements RunStore {
  readonly dir: string;
  private readonly retentionSeconds: number;
  private readonly now: () => number;
  private lastSweep = 0;
  /** Where the next sweep starts among the files, by name; random at first (short processes). */
  private sweepFrom = Math.floor(Math.random() * 1_000_000);

  constructor(projectDir: string, options: FileRunStoreOptions = {}) {
    this.dir = join(projectDir, '.dirigent', 'runs');
    this.retentionSeconds = options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS;
    this.now = options.now ?? Date.now;
  }

  /** Writes the run; saving an ended run may sweep others (see the class comment). */
  async save(run: StoredRun): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const file = this.fileOf(run.record.runId);
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(run));
    await rename(tmp, file);
    if (hasEnded(run.record.status) && this.now() - this.lastSweep >= SWEEP_EVERY_MS) {
      this.lastSweep = this.now();
      if (await this.sweepDue()) await this.sweep();
    }
  }

  /** Whether no process swept the project's runs in the last minute; if so, this one does. */
  private async sweepDue(): Promise<boolean> {
    const file = join(this.dir, SWEPT);
    const last = (await stat(file).catch(() => undefined))?.mtimeMs;
    if (last !== undefined && this.now() - last < SWEEP_EVERY_MS) return false;
    const at = new Date(this.now());
    if (last === undefined) await writeFile(file, '');
    await utimes(file, at, at);
    return true;
  }

  /** The run, or undefined when it is not kept (never was, or its retention is over). */
  async load(runId: string): Promise<StoredRun | undefined> {
    if (!/^[\w-]+$/.test(runId)) return undefined;
    let run: StoredRun;
    try {
      run = JSON.parse(await readFile(this.fileOf(runId), 'utf8')) as StoredRun;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    if (!this.expired(run)) return run;
    await rm(this.fileOf(runId), { force: true });
    return undefined;
  }

  /** The records of the runs kept, newest first; those found expired are removed. */
  async list(): Promise<RunRecord[]> {
    const runs = await Promise.all((await this.runIds()).map((id) => this.load(id)));
    return runs.flatMap((r) => (r ? [r.record] : [])).sort((a, b) => b.startedAt - a.startedAt);
  }

  /**
   * Removes the ended runs whose retention is over among at most `max` files, the next ones after
   * those the previous sweep looked at; resolves with how many were removed.
   */
  async sweep(max = SWEEP_FILES): Promise<number> {
    const ids = await this.runIds();
    if (ids.length === 0) return 0;
    const from = this.sweepFrom % ids.length;
    const picked = [...ids.slice(from), ...ids.slice(0, from)].slice(0, max);
    this.sweepFrom = from + picked.length;
    let removed = 0;
    for (const id of picked) {
      const kept = await this.load(id).catch(() => null); // being replaced: the next sweep
      if (kept === undefined) removed++;
    }
    return removed;
  }

  /** Whether `run` ended longer ago than its retention. */
  expired(run: StoredRun): boolean {
    const { record } = run;
    if (!hasEnded(record.status)) return false;
    const retention = runRetentionSeconds(run, this.retentionSeconds);
    if (!Number.isFinite(retention)) return false;
    return (record.endedAt ?? record.startedAt) + retention * 1000 <= this.now();
  }

  /** The ids of the runs kept here, by name. */
  private async runIds(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return [];
    }
    return names
      .filter((n) => n.endsWith('.json'))
      .map((n) => n.slice(0, -5))
      .sort();
  }

  private fileOf(runId: string): string {
    return join(this.dir, `${runId}.json`);
  }
}
