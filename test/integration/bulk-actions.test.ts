/**
 * Bulk actions by filter: a dry run counts and shows a sample and changes nothing; an action
 * reports matched, acted, skipped and failed; the same action given again acts on no run twice
 * and counts each once. Embedded and on Redis (a worker in this process) alike; an action
 * interrupted by SIGKILL and started again is in `test/e2e/bulk-cancel.test.ts`.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Dirigent } from '../../src/operations/dirigent.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentModes, MODES } from '../support/dirigent-modes.js';
import { redisForTest } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';

const redis = redisForTest();
const modes = dirigentModes(redis);

/** `held` waits for signal `go` (tagged by its input `customer`); `gate` fails until `open` exists. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-bulk-'));
  const directives = join(dir, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeDirective(
    directives,
    'held',
    `<metadata><tag name="customer" value="\${inputs.customer}"/></metadata>
  <inputs><input name="customer" type="string" required="true"/></inputs>
  <process><step name="hold"><wait signal="go"/></step></process>`,
  );
  writeDirective(
    directives,
    'gate',
    `<process><step name="gate"><retry attempts="1"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="test -f open"/></execute></step></process>`,
  );
  return dir;
}

for (const mode of MODES) {
  describe(`bulk actions (${mode})`, { timeout: 60_000 }, () => {
    async function open(): Promise<{ dirigent: Dirigent; dir: string }> {
      const dir = project();
      return { dirigent: await modes.open(mode, dir), dir };
    }

    async function waiting(dirigent: Dirigent, customer: string): Promise<string> {
      const run = await dirigent.start({ directive: 'held', inputs: { customer } });
      expect((await run.wait()).status).toBe('waiting');
      return run.runId;
    }

    it('counts and shows a dry run, cancels what a filter matches, and skips what has ended', async () => {
      const { dirigent } = await open();
      const c1 = [await waiting(dirigent, 'c1'), await waiting(dirigent, 'c1')];
      const c2 = await waiting(dirigent, 'c2');
      const failed = await dirigent.run({ directive: 'gate' });
      expect(failed.status).toBe('failed');

      // Counted by tag as they are listed.
      const counted = await dirigent.runs.counts({ tags: { customer: 'c1' } });
      expect(counted.total).toBe(2);
      expect(counted.byStatus.waiting).toBe(2);
      expect(
        (await dirigent.runs.counts({ directive: 'held', tags: { customer: 'c2' } })).total,
      ).toBe(1);
      const dry = await dirigent.bulk({
        action: 'cancel',
        filter: { tags: { customer: 'c1' } },
        dryRun: true,
      });
      expect(dry).toMatchObject({ matched: 2, acted: 0, skipped: 0, failed: 0, dryRun: true });
      expect(dry.sample?.map((s) => s.runId).sort()).toEqual([...c1].sort());
      for (const id of c1) expect((await dirigent.get(id)).status).toBe('waiting');

      const progress: number[] = [];
      const cancelled = await dirigent.bulk({
        action: 'cancel',
        filter: { tags: { customer: 'c1' } },
        onProgress: (r) => progress.push(r.matched),
      });
      expect(cancelled).toMatchObject({ matched: 2, acted: 2, skipped: 0, failed: 0 });
      expect(progress).toEqual([2]);
      for (const id of c1) expect((await dirigent.get(id)).status).toBe('cancelled');
      expect((await dirigent.get(c2)).status).toBe('waiting');

      // Every run: the ended ones are skipped, the waiting one cancelled.
      const all = await dirigent.bulk({ action: 'cancel', filter: {} });
      expect(all).toMatchObject({ matched: 4, acted: 1, skipped: 3, failed: 0 });
      expect((await dirigent.get(c2)).status).toBe('cancelled');
    });

    it('acts on no run twice when the same action is given again, and counts each once', async () => {
      const { dirigent } = await open();
      const ids = [await waiting(dirigent, 'c7'), await waiting(dirigent, 'c7')];
      const request = { action: 'cancel' as const, filter: { directive: 'held' } };
      const first = await dirigent.bulk(request);
      expect(first).toMatchObject({ matched: 2, acted: 2, skipped: 0 });
      const again = await dirigent.bulk(request);
      expect(again.actionId).toBe(first.actionId);
      expect(again).toMatchObject({ matched: 2, acted: 2, skipped: 0, failed: 0 });
      for (const id of ids) {
        const record = await dirigent.get(id);
        expect(record.status).toBe('cancelled');
        expect(record.steps.filter((s) => s.status === 'cancelled')).toHaveLength(1);
      }
      // Another action id is another action: the runs have ended, so it skips them.
      const other = await dirigent.bulk({ ...request, actionId: 'cancel-again' });
      expect(other).toMatchObject({ matched: 2, acted: 0, skipped: 2 });
    });

    it('redrives every failed run a filter matches', async () => {
      const { dirigent, dir } = await open();
      const a = await dirigent.run({ directive: 'gate' });
      const b = await dirigent.run({ directive: 'gate' });
      writeFileSync(join(dir, 'open'), '');
      const report = await dirigent.bulk({
        action: 'redrive',
        filter: { status: 'failed' },
        by: 'ops',
      });
      expect(report).toMatchObject({ matched: 2, acted: 2, skipped: 0, failed: 0 });
      for (const id of [a.runId, b.runId]) {
        // On Redis the redrives are queued when the action ends: each run goes on soon after.
        const record = await waitFor(
          async () => {
            const r = await dirigent.get(id);
            return r.status === 'completed' && r;
          },
          { what: `run ${id} redriven to its end` },
        );
        expect(record.redrives?.[0]?.by).toBe(`ops (action ${report.actionId})`);
      }
    });

    it('refuses an unknown action, status or action id', async () => {
      const { dirigent } = await open();
      await expect(dirigent.bulk({ action: 'explode' as never, filter: {} })).rejects.toMatchObject(
        { code: 'INVALID_REQUEST' },
      );
      await expect(
        dirigent.bulk({ action: 'cancel', filter: { status: 'done' as never } }),
      ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
      await expect(
        dirigent.bulk({ action: 'cancel', filter: {}, actionId: '../x' }),
      ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    });
  });
}
