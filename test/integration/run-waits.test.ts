/**
 * Waiting for runs on Redis, from a client's side: hundreds of waits at once are each told their
 * own run's record; a run started by another client is waited for as well as one started here; a
 * wait for a run that does not exist says so; and a run started here whose start job vanished
 * before any worker took it up is reported missing, not waited for forever.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { Dirigent } from '../../src/operations/dirigent.js';
import { QueueName } from '../../src/redis/queue-names.js';
import { queueOptions } from '../../src/redis/queue-options.js';
import { writeDirective } from '../support/directive-file.js';
import { inProcessWorker } from '../support/in-process-worker.js';
import { redisForTest } from '../support/redis.js';
import { rejection } from '../support/thrown.js';

const redis = redisForTest();
const closers: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers.length = 0;
});

/** A project with `echo-one` (one step echoing `n`, its output `n`), and a client on Redis. */
async function client(): Promise<{ dirigent: Dirigent; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-waits-'));
  closers.push(() => rmSync(dir, { recursive: true, force: true }));
  const directives = join(dir, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeDirective(
    directives,
    'echo-one',
    `<inputs><input name="n" type="integer" default="0"/></inputs>
  <process><step name="echo"><execute item_type="tool" item_id="dirigent/util/echo"><param name="n" value="\${inputs.n}"/></execute></step></process>
  <outputs><output name="n" value="\${steps.echo.result.n}"/></outputs>`,
  );
  const dirigent = await Dirigent.open({ project: dir, redis: redis.url, prefix: redis.prefix });
  closers.push(() => dirigent.close());
  return { dirigent, dir };
}

function worker(dir: string): void {
  const w = inProcessWorker(redis, { projectDir: dir });
  closers.push(() => w.close());
}

describe('waiting for runs on Redis', { timeout: 60_000 }, () => {
  it('tells each of 500 waits begun at once its own run', async () => {
    const { dirigent, dir } = await client();
    worker(dir);
    const records = await Promise.all(
      Array.from({ length: 500 }, async (_, n) => {
        const run = await dirigent.start({ directive: 'echo-one', inputs: { n } });
        return run.wait();
      }),
    );
    expect(records.map((r) => [r.status, r.outputs?.n])).toEqual(
      Array.from({ length: 500 }, (_, n) => ['completed', n]),
    );
  });

  it('waits for a run another client started as for one it started itself', async () => {
    const { dirigent, dir } = await client();
    const { dirigent: other } = await client();
    const started = await Promise.all(
      [1, 2, 3].map((n) => other.start({ directive: 'echo-one', inputs: { n } })),
    );
    // Waited for while still queued (no worker yet), and told once a worker runs it.
    const waits = started.map((run) => dirigent.wait(run.runId));
    worker(dir);
    expect((await Promise.all(waits)).map((r) => r.outputs?.n)).toEqual([1, 2, 3]);
  });

  it('says RUN_NOT_FOUND for a run that no one started', async () => {
    const { dirigent } = await client();
    expect(await rejection(dirigent.wait(randomUUID()))).toMatchObject({ code: 'RUN_NOT_FOUND' });
  });

  it('reports a run started here whose start job vanished unstarted, within seconds', async () => {
    const { dirigent } = await client();
    const run = await dirigent.start({ directive: 'echo-one', inputs: { n: 1 } });
    const queue = new Queue(QueueName.RUNS, queueOptions(redis.connect(), redis.prefix));
    closers.push(() => queue.close());
    await queue.remove(run.runId);
    const t0 = Date.now();
    expect(await rejection(run.wait())).toMatchObject({ code: 'RUN_NOT_FOUND' });
    // Trusted queued for a few seconds (it was started here), then looked for and not found.
    expect(Date.now() - t0).toBeLessThan(15_000);
  });
});
