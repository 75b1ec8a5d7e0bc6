/**
 * The ledger of bulk actions in an embedded project (see `operations/bulk-action.ts`): a file of
 * JSON lines per action under `.dirigent/bulk/`, a line `{"run": id, "outcome": …}` per entry,
 * the last line of a run the one that counts. A line cut short by a crash is ignored.
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ignoreMissing } from '../errors/ignore-expected.js';
import type { BulkLedger, BulkOutcome } from '../operations/bulk-action.js';

/** See the module comment. */
export class FileBulkLedger implements BulkLedger {
  private readonly dir: string;
  /** Each action's entries, read once per process. */
  private readonly read = new Map<string, Map<string, BulkOutcome>>();

  constructor(projectDir: string) {
    this.dir = join(projectDir, '.dirigent', 'bulk');
  }

  async lookup(actionId: string, runIds: readonly string[]): Promise<Map<string, BulkOutcome>> {
    const all = await this.entries(actionId);
    const found = new Map<string, BulkOutcome>();
    for (const id of runIds) {
      const outcome = all.get(id);
      if (outcome !== undefined) found.set(id, outcome);
    }
    return found;
  }

  async write(actionId: string, outcomes: ReadonlyMap<string, BulkOutcome>): Promise<void> {
    const all = await this.entries(actionId);
    let lines = '';
    for (const [run, outcome] of outcomes) {
      lines += JSON.stringify({ run, outcome }) + '\n';
      all.set(run, outcome);
    }
    await mkdir(this.dir, { recursive: true });
    // A line cut short before (the process died mid-write) ends here, and is skipped when read.
    await appendFile(this.fileOf(actionId), '\n' + lines);
  }

  private async entries(actionId: string): Promise<Map<string, BulkOutcome>> {
    let entries = this.read.get(actionId);
    if (entries !== undefined) return entries;
    entries = new Map();
    const text = await readFile(this.fileOf(actionId), 'utf8').catch(ignoreMissing);
    for (const line of (text ?? '').split('\n')) {
      try {
        const { run, outcome } = JSON.parse(line) as { run: string; outcome: BulkOutcome };
        if (typeof run === 'string') entries.set(run, outcome);
      } catch {
        // an empty line, or one cut short
      }
    }
    this.read.set(actionId, entries);
    return entries;
  }

  private fileOf(actionId: string): string {
    return join(this.dir, `${actionId}.jsonl`);
  }
}
