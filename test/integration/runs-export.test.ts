/**
 * Exporting ended runs as JSON lines, embedded and on Redis (a worker in this process): one line
 * per run with its record, inputs, outputs and steps, filtered as a run list is, a page at a
 * time; run again on the same file after an interruption (a half-written last line included), it
 * writes each run once; a file it cannot write, or a filter no ended run matches, is refused with
 * a code that says so, never INTERNAL.
 */
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
  chmodSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunStatus } from '../../src/engine/run-record.js';
import type { Dirigent } from '../../src/operations/dirigent.js';
import type { ExportedRun } from '../../src/operations/export-runs.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentModes, MODES } from '../support/dirigent-modes.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();
const modes = dirigentModes(redis);

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-export-'));
  const directives = join(dir, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeDirective(
    directives,
    'order',
    `<metadata><description>An order</description><tag name="customer" value="\${inputs.customer}"/></metadata>
  <inputs>
    <input name="customer" type="string" required="true"/>
    <input name="amount" type="number" default="1"/>
  </inputs>
  <process>
    <step name="take"><execute item_type="tool" item_id="dirigent/util/echo"><param name="customer" value="\${inputs.customer}"/></execute></step>
    <step name="check"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="test \${inputs.amount} -le 100"/></execute></step>
  </process>
  <outputs><output name="taken" expr="steps.take.result.customer"/></outputs>`,
  );
  writeDirective(
    directives,
    'ask',
    `<metadata><description>Asks</description></metadata>
  <process><step name="ask"><instruction>Go on?</instruction></step></process>`,
  );
  return dir;
}

/** What an export file holds, line by line. */
function linesOf(file: string): ExportedRun[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ExportedRun);
}

const idsIn = (file: string) => linesOf(file).map((r) => r.runId);

/** A millisecond later than any time taken before: the time then. */
async function nextMs(): Promise<number> {
  const now = Date.now();
  while (Date.now() <= now) await new Promise((r) => setImmediate(r));
  return Date.now();
}

for (const mode of MODES) {
  describe(`runs export (${mode})`, { timeout: 60_000 }, () => {
    let dir: string;

    async function open(): Promise<Dirigent> {
      dir = project();
      return modes.open(mode, dir);
    }

    /** Runs `order` to its end, each in a later millisecond than the last; answers its id. */
    async function order(
      dirigent: Dirigent,
      customer: string,
      amount = 1,
      expected: RunStatus = 'completed',
    ): Promise<string> {
      const before = Date.now();
      const run = await dirigent.start({ directive: 'order', inputs: { customer, amount } });
      expect((await run.wait()).status).toBe(expected);
      while (Date.now() === before) await new Promise((r) => setImmediate(r));
      return run.runId;
    }

    it('writes one line per ended run, newest first: its record, inputs, outputs and steps; runs not ended are left out', async () => {
      const dirigent = await open();
      const a = await order(dirigent, 'c1');
      const b = await order(dirigent, 'c2', 500, 'failed');
      const asking = await dirigent.start({ directive: 'ask' });
      expect((await asking.wait()).status).toBe('waiting');
      const out = join(dir, 'runs.jsonl');

      const report = await dirigent.exportRuns({ out });
      expect(report).toEqual({ file: out, written: 2, skipped: 0, notEnded: 1, repaired: false });
      const [failed, completed] = linesOf(out);
      expect(failed!.runId).toBe(b);
      expect(failed!.record).toMatchObject({ runId: b, status: 'failed', directive: 'order' });
      expect(failed!.inputs).toEqual({ customer: 'c2', amount: 500 });
      expect(completed).toMatchObject({
        runId: a,
        record: { status: 'completed', tags: { customer: 'c1' } },
        inputs: { customer: 'c1', amount: 1 },
        outputs: { taken: 'c1' },
        steps: { take: { status: 'completed', result: { customer: 'c1' } } },
      });
      // Every line opens with the run's id: what an export going on reads.
      expect(readFileSync(out, 'utf8').split('\n')[0]).toMatch(/^\{"runId":"/);
    });

    it('writes only the runs the status, directive, tags and time window match', async () => {
      const dirigent = await open();
      const c1 = await order(dirigent, 'c1');
      const from = await nextMs(); // after c1 started, before c2 does
      const c2 = await order(dirigent, 'c2');
      const big = await order(dirigent, 'c1', 500, 'failed');
      const to = Date.now();
      await nextMs(); // c3 starts after `to`
      const late = await order(dirigent, 'c3');
      const exported = async (
        filter: Parameters<Dirigent['exportRuns']>[0]['filter'],
        name: string,
      ) => {
        const out = join(dir, `${name}.jsonl`);
        await dirigent.exportRuns({ out, filter, pageSize: 2 });
        return idsIn(out);
      };
      expect(await exported({ status: 'failed' }, 'failed')).toEqual([big]);
      expect(await exported({ status: 'completed' }, 'completed')).toEqual([late, c2, c1]);
      expect(await exported({ tags: { customer: 'c1' } }, 'c1')).toEqual([big, c1]);
      expect(await exported({ directive: 'ask' }, 'ask')).toEqual([]);
      expect(await exported({ directive: 'order', since: from, until: to }, 'window')).toEqual([
        big,
        c2,
      ]);
    });

    it('goes on after an interruption, a half-written last line included, writing each run once', async () => {
      const dirigent = await open();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await order(dirigent, `c${i}`));
      const newestFirst = [...ids].reverse();
      const out = join(dir, 'runs.jsonl');

      // Stopped after its first page (two runs), as a killed process would be.
      await expect(
        dirigent.exportRuns({
          out,
          pageSize: 2,
          onProgress: () => {
            throw new Error('interrupted');
          },
        }),
      ).rejects.toThrow('interrupted');
      expect(idsIn(out)).toEqual(newestFirst.slice(0, 2));
      // Killed in the middle of the next line.
      const next = JSON.stringify({ runId: newestFirst[2], record: { status: 'completed' } });
      appendFileSync(out, next.slice(0, 30));

      const report = await dirigent.exportRuns({ out, pageSize: 2 });
      expect(report).toMatchObject({ written: 3, skipped: 2, repaired: true });
      expect(idsIn(out)).toEqual(newestFirst);
      expect(linesOf(out).every((r) => r.record.status === 'completed' && r.inputs !== null)).toBe(
        true,
      );

      // Once more: nothing new to write.
      expect(await dirigent.exportRuns({ out })).toMatchObject({ written: 0, skipped: 5 });
      expect(idsIn(out)).toHaveLength(5);
      // A run that ends meanwhile is appended.
      const later = await order(dirigent, 'c9');
      expect(await dirigent.exportRuns({ out })).toMatchObject({ written: 1, skipped: 5 });
      expect(idsIn(out)).toEqual([...newestFirst, later]);
    });

    it('refuses, with a code that says why, a filter no ended run matches, a folder, a missing folder, an unwritable file and a file no export wrote', async () => {
      const dirigent = await open();
      await order(dirigent, 'c1');
      const refused = async (request: Parameters<Dirigent['exportRuns']>[0]) => {
        const err = await dirigent.exportRuns(request).then(
          () => undefined,
          (e: unknown) => e as { code: string; message: string; hint?: string },
        );
        expect(err, JSON.stringify(request)).toBeDefined();
        expect(err!.hint, err!.message).toMatch(/\S/);
        return err!;
      };
      const out = join(dir, 'runs.jsonl');
      expect(await refused({ out, filter: { status: 'waiting' } })).toMatchObject({
        code: 'INVALID_REQUEST',
        message: expect.stringContaining('ended runs'),
      });
      expect(await refused({ out, pageSize: 5000 })).toMatchObject({ code: 'INVALID_REQUEST' });
      expect(await refused({ out: dir })).toMatchObject({ code: 'IS_A_DIRECTORY' });
      expect(await refused({ out: join(dir, 'no', 'such', 'x.jsonl') })).toMatchObject({
        code: 'FILE_NOT_FOUND',
        message: expect.stringContaining('does not exist'),
      });
      // A file this user may not write (root may write any file: a place the kernel refuses).
      let locked = join(dir, 'locked.jsonl');
      if (process.getuid?.() === 0) locked = '/sys/kernel/dirigent-export.jsonl';
      else {
        writeFileSync(locked, '');
        chmodSync(locked, 0o444);
      }
      expect(await refused({ out: locked })).toMatchObject({ code: 'FILE_NOT_WRITABLE' });
      const notes = join(dir, 'notes.txt');
      writeFileSync(notes, 'my notes\n');
      expect(await refused({ out: notes })).toMatchObject({
        code: 'INVALID_REQUEST',
        message: expect.stringContaining('line 1 is not a run an export wrote'),
      });
      expect(readFileSync(notes, 'utf8')).toBe('my notes\n');
      rmSync(out, { force: true });
    });
  });
}
