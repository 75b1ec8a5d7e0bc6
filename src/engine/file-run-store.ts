import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunRecord } from './run-record.js';
import type { RunStore, StoredRun } from './run-store.js';

/**
 * Keeps runs as JSON files in `<project>/.dirigent/runs/`, written atomically (temporary file,
 * then rename), so a waiting embedded run survives the process and `dirigent signal` can resume it.
 */
export class FileRunStore implements RunStore {
  readonly dir: string;

  constructor(projectDir: string) {
    this.dir = join(projectDir, '.dirigent', 'runs');
  }

  async save(run: StoredRun): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const file = this.fileOf(run.record.runId);
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(run));
    await rename(tmp, file);
  }

  async load(runId: string): Promise<StoredRun | undefined> {
    if (!/^[\w-]+$/.test(runId)) return undefined;
    try {
      return JSON.parse(await readFile(this.fileOf(runId), 'utf8')) as StoredRun;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async list(): Promise<RunRecord[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return [];
    }
    const runs = await Promise.all(
      names.filter((n) => n.endsWith('.json')).map((n) => this.load(n.slice(0, -5))),
    );
    return runs.flatMap((r) => (r ? [r.record] : [])).sort((a, b) => b.startedAt - a.startedAt);
  }

  private fileOf(runId: string): string {
    return join(this.dir, `${runId}.json`);
  }
}
