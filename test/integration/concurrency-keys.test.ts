/**
 * Run concurrency keys on Redis, under two workers: at most `limit` runs of a directive go at once
 * per rendered key; the others wait `queued`, holding no worker slot, and start when a slot frees,
 * in start order per key; a key with hundreds of waiting runs does not delay another key's run.
 * Embedded, the same holds in the one process.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Dirigent } from '../../src/operations/dirigent.js';
import { writeDirective } from '../support/directive-file.js';
import { inProcessWorker } from '../support/in-process-worker.js';
import { redisForTest } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';

const redis = redisForTest();
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers.length = 0;
});

/** `keyed`: one run at a time per customer; its step logs `start` and `end` around a short sleep. */
async function deployment(
  limit: number,
  mode: 'redis' | 'embedded' = 'redis',
): Promise<{ dirigent: Dirigent; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-keys-'));
  const directives = join(dir, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeDirective(
    directives,
    'keyed',
    `<metadata><concurrency key="\${inputs.customer}" limit="${limit}"/></metadata>
  <inputs><input name="customer" type="string" required="true"/><input name="n" type="integer" default="0"/><input name="nap" type="number" default="0.05"/></inputs>
  <process><step name="work"><retry attempts="1"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo start {input:customer} {input:n} >> log; sleep {input:nap}; echo end {input:customer} {input:n} >> log"/></execute></step></process>`,
  );
  closers.push(() => rmSync(dir, { recursive: true, force: true }));
  if (mode === 'embedded') {
    const dirigent = await Dirigent.open({ project: dir });
    closers.push(() => dirigent.close());
    return { dirigent, dir };
  }
  for (let i = 0; i < 2; i++) {
    const w = inProcessWorker(redis, { projectDir: dir });
    closers.push(() => w.close());
  }
  const dirigent = await Dirigent.open({ project: dir, redis: redis.url, prefix: redis.prefix });
  closers.push(() => dirigent.close());
  return { dirigent, dir };
}

const lines = (dir: string) => readFileSync(join(dir, 'log'), 'utf8').trim().split('\n');

describe('run concurrency keys (redis, two workers)', { timeout: 90_000 }, () => {
  it('never lets two runs of one key overlap, starts each key in start order, and runs keys side by side', async () => {
    const { dirigent, dir } = await deployment(1);
    const runs = [];
    for (let n = 0; n < 6; n++)
      for (const customer of ['c1', 'c2'])
        runs.push(await dirigent.start({ directive: 'keyed', inputs: { customer, n } }));
    const queued = await Promise.all(runs.map((r) => r.status()));
    expect(queued.some((r) => r.status === 'queued')).toBe(true);
    for (const run of runs) expect((await run.wait()).status).toBe('completed');
    const log = lines(dir);
    for (const customer of ['c1', 'c2']) {
      const own = log.filter((l) => l.split(' ')[1] === customer);
      // start, end, start, end…: never two starts in a row.
      expect(own.map((l) => l.split(' ')[0])).toEqual(
        Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? 'start' : 'end')),
      );
      expect(own.filter((l) => l.startsWith('start')).map((l) => Number(l.split(' ')[2]))).toEqual([
        0, 1, 2, 3, 4, 5,
      ]);
    }
    // The two keys went side by side: a c2 run started before the last c1 run ended.
    const firstC2 = log.indexOf('start c2 0');
    expect(firstC2).toBeLessThan(log.lastIndexOf('end c1 5'));
    const record = await runs[0]!.status();
    expect(record.concurrency).toEqual({ key: 'c1', limit: 1 });
  });

  it('starts a second key at once although a first has 300 runs waiting', async () => {
    const { dirigent, dir } = await deployment(1);
    const many = await Promise.all(
      Array.from({ length: 300 }, (_, n) =>
        dirigent.start({ directive: 'keyed', inputs: { customer: 'big', n, nap: 0 } }),
      ),
    );
    const small = await dirigent.start({ directive: 'keyed', inputs: { customer: 'small' } });
    expect((await small.wait()).status).toBe('completed');
    const bigDone = lines(dir).filter((l) => l.startsWith('end big')).length;
    // Not behind the first key's waiting runs: most of them have not run yet.
    expect(bigDone).toBeLessThan(150);
    await waitFor(
      async () => (await dirigent.runs.counts({ directive: 'keyed' })).byStatus.completed === 301,
      { what: 'every run of the first key to end', timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(many).toHaveLength(300);
  });
});

describe('run concurrency keys (embedded)', { timeout: 30_000 }, () => {
  it('holds a run queued until its key has a free slot, in start order, and cancels one that waits', async () => {
    const { dirigent, dir } = await deployment(2, 'embedded');
    const runs = [];
    for (let n = 0; n < 5; n++)
      runs.push(await dirigent.start({ directive: 'keyed', inputs: { customer: 'c1', n } }));
    expect(runs.map((r) => r.record.status)).toEqual([
      'running',
      'running',
      'queued',
      'queued',
      'queued',
    ]);
    expect((await dirigent.get(runs[4]!.runId)).status).toBe('queued');
    expect((await dirigent.cancel(runs[4]!.runId)).status).toBe('cancelled');
    for (const run of runs.slice(0, 4)) expect((await run.wait()).status).toBe('completed');
    const log = lines(dir);
    // Never more than two at once.
    let open = 0;
    for (const l of log) {
      open += l.startsWith('start') ? 1 : -1;
      expect(open).toBeLessThanOrEqual(2);
    }
    // Two go at once, so within each pair their tools race to the log: runs 0 and 1 first, then 2 and 3.
    const started = log.filter((l) => l.startsWith('start')).map((l) => Number(l.split(' ')[2]));
    expect([started.slice(0, 2).sort(), started.slice(2).sort()]).toEqual([
      [0, 1],
      [2, 3],
    ]);
  });
});
