/**
 * A bulk action's core over plain operations and an in-memory ledger: pages are read one after
 * another, each run is acted on once and counted once, a run left `pending` by an interrupted pass
 * is looked at before anything is done again, and what does not apply is skipped, not failed.
 */
import { describe, expect, it } from 'vitest';
import type { RunRecord, RunStatus } from '../../../src/engine/run-record.js';
import { DirigentError } from '../../../src/errors/dirigent-error.js';
import { ErrorCode } from '../../../src/errors/error-codes.js';
import {
  actionIdOf,
  runBulkAction,
  type BulkLedger,
  type BulkOperations,
  type BulkOutcome,
} from '../../../src/operations/bulk-action.js';

function record(n: number, status: RunStatus): RunRecord {
  return {
    runId: `run-${n}`,
    directive: 'd',
    status,
    outputs: null,
    steps: [],
    error: null,
    startedAt: 1000 + n,
    endedAt: null,
  };
}

class MemoryLedger implements BulkLedger {
  readonly entries = new Map<string, Map<string, BulkOutcome>>();
  lookup(actionId: string, runIds: readonly string[]) {
    const all = this.entries.get(actionId) ?? new Map<string, BulkOutcome>();
    return Promise.resolve(
      new Map(runIds.flatMap((id) => (all.has(id) ? [[id, all.get(id)!]] : []))),
    );
  }
  write(actionId: string, outcomes: ReadonlyMap<string, BulkOutcome>) {
    const all = this.entries.get(actionId) ?? new Map<string, BulkOutcome>();
    for (const [id, o] of outcomes) all.set(id, o);
    this.entries.set(actionId, all);
    return Promise.resolve();
  }
}

/** Operations over `runs`, cancelling by setting the status, and counting each call. */
function operations(runs: RunRecord[]) {
  const calls: string[] = [];
  let listed = 0;
  const ops: BulkOperations = {
    list: (filter) => {
      listed++;
      const from = filter.cursor === undefined ? 0 : Number(filter.cursor);
      const page = runs.slice(from, from + (filter.limit ?? 50));
      const next = from + page.length < runs.length ? String(from + page.length) : undefined;
      return Promise.resolve({ runs: page.map((r) => ({ ...r })), ...(next && { next }) });
    },
    get: (runId) => Promise.resolve({ ...runs.find((r) => r.runId === runId)! }),
    cancel: (runId) => {
      calls.push(`cancel ${runId}`);
      const run = runs.find((r) => r.runId === runId)!;
      if (run.runId === 'run-13') throw new DirigentError(ErrorCode.REDIS_UNAVAILABLE, 'away');
      run.status = 'cancelled';
      return Promise.resolve();
    },
    redrive: (runId) => {
      calls.push(`redrive ${runId}`);
      return Promise.resolve();
    },
    rerun: (runId) => {
      calls.push(`rerun ${runId}`);
      return Promise.resolve();
    },
  };
  return { ops, calls, listed: () => listed };
}

describe('a bulk action', () => {
  it('acts on the runs it applies to, skips the rest, and lists the failures', async () => {
    const runs = Array.from({ length: 20 }, (_, n) =>
      record(n, n % 4 === 0 ? 'completed' : 'waiting'),
    );
    const { ops, calls } = operations(runs);
    const report = await runBulkAction(ops, new MemoryLedger(), {
      action: 'cancel',
      filter: {},
    });
    expect(report).toMatchObject({ matched: 20, acted: 14, skipped: 5, failed: 1 });
    expect(report.failures).toEqual([
      { runId: 'run-13', code: ErrorCode.REDIS_UNAVAILABLE, message: 'away' },
    ]);
    expect(calls).toHaveLength(15);
  });

  it('given again with the same id, acts on no run twice and counts each once', async () => {
    const runs = Array.from({ length: 5 }, (_, n) => record(n, 'waiting'));
    const { ops, calls } = operations(runs);
    const ledger = new MemoryLedger();
    const request = { action: 'cancel' as const, filter: { directive: 'd' } };
    await runBulkAction(ops, ledger, request);
    const again = await runBulkAction(ops, ledger, request);
    expect(again).toMatchObject({ matched: 5, acted: 5, skipped: 0, failed: 0 });
    expect(calls).toHaveLength(5);
  });

  it('looks at a run left pending by an interrupted pass before acting on it again', async () => {
    const runs = [record(0, 'cancelled'), record(1, 'waiting')];
    const { ops, calls } = operations(runs);
    const ledger = new MemoryLedger();
    const actionId = actionIdOf('cancel', {});
    // The pass that stopped had asked for run-0's cancel (it took effect) and not yet for run-1's.
    await ledger.write(
      actionId,
      new Map<string, BulkOutcome>([
        ['run-0', 'pending'],
        ['run-1', 'pending'],
      ]),
    );
    const report = await runBulkAction(ops, ledger, { action: 'cancel', filter: {} });
    expect(report).toMatchObject({ acted: 2, skipped: 0, failed: 0 });
    expect(calls).toEqual(['cancel run-1']);
    expect(ledger.entries.get(actionId)).toEqual(
      new Map([
        ['run-0', 'acted'],
        ['run-1', 'acted'],
      ]),
    );
  });

  it('reads the runs a page at a time, and a dry run changes nothing', async () => {
    const runs = Array.from({ length: 1200 }, (_, n) => record(n, 'failed'));
    const { ops, calls, listed } = operations(runs);
    const pages: number[] = [];
    const dry = await runBulkAction(ops, new MemoryLedger(), {
      action: 'redrive',
      filter: {},
      dryRun: true,
      onProgress: (r) => pages.push(r.matched),
    });
    expect(dry).toMatchObject({ matched: 1200, acted: 0, dryRun: true });
    expect(dry.sample?.map((s) => s.runId)).toEqual(runs.slice(0, 10).map((r) => r.runId));
    expect(listed()).toBe(3);
    expect(pages).toEqual([500, 1000, 1200]);
    expect(calls).toEqual([]);
  });

  it('names an action by what it does and to which runs, tags in any order', () => {
    expect(actionIdOf('cancel', { tags: { a: '1', b: '2' } })).toBe(
      actionIdOf('cancel', { tags: { b: '2', a: '1' } }),
    );
    expect(actionIdOf('cancel', {})).not.toBe(actionIdOf('redrive', {}));
    expect(actionIdOf('cancel', {})).toMatch(/^cancel-[0-9a-f]{16}$/);
  });
});
