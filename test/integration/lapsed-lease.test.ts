/**
 * A worker that finds its own lease lapsed (it was held up, or cut off from Redis, for longer than
 * the lease) stops driving its runs and lets them go: its lease is live again after the renewal
 * that told it, so another worker must be able to claim them at once (not be refused while the
 * run still names the first worker as its owner), and whoever takes a run up again claims it
 * anew, so that what the lost drive still sends is refused.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Dirigent } from '../../src/operations/dirigent.js';
import { workersKey } from '../../src/redis/takeover/worker-lease.js';
import { writeDirective } from '../support/directive-file.js';
import { inProcessWorker, type InProcessWorker } from '../support/in-process-worker.js';
import { redisForTest } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';

const redis = redisForTest();
const closers: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers.length = 0;
});

/** A call that sleeps the first time it is made, not after. */
const NAP = `<execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo start >> steps.log; [ $(grep -c start steps.log) = 1 ] && sleep 30; echo done"/></execute>`;

/**
 * A project whose `slow` directive's one step makes that call, and whose `slow-each` makes two
 * calls at once as the items of a foreach (tool jobs, each logging its start and sleeping 2 s).
 */
function slowProject(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-lapsed-'));
  closers.push(() => rmSync(dir, { recursive: true, force: true }));
  const directives = join(dir, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeDirective(directives, 'slow', `<process><step name="nap">${NAP}</step></process>`);
  writeDirective(
    directives,
    'slow-each',
    `<inputs><input name="items" type="array" default="[1, 2]"/></inputs><process><step name="nap"><foreach over="\${inputs.items}" as="n" parallel="2"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo start >> steps.log; sleep 2; echo done"/></execute></foreach></step></process>`,
  );
  return dir;
}

/**
 * Starts `slow` on worker `a` and, once its call runs there, takes `a`'s lease away as if it had
 * lapsed: its next renewal tells it so (and holds the lease again), and it stops driving the run,
 * killing the call. Resolves with the run and its hash's key.
 */
async function lapseDuringCall(dirigent: Dirigent, dir: string, a: InProcessWorker) {
  const run = await dirigent.start({ directive: 'slow' });
  const runKey = `${redis.prefix}:run:${run.runId}`;
  await waitFor(async () => (await redis.redis.hget(runKey, 'owner')) === a.runs.name, {
    what: 'the first claim',
  });
  await waitFor(() => existsSync(join(dir, 'steps.log')), { what: 'the first call' });
  await redis.redis.zrem(workersKey(redis.prefix), a.runs.name);
  return { run, runKey };
}

/** {@link slowProject}, a client of it, and worker `a` serving it, all closed after the test. */
async function slowProjectServed() {
  const dir = slowProject();
  const dirigent = await Dirigent.open({ project: dir, redis: redis.url, prefix: redis.prefix });
  closers.push(() => dirigent.close());
  const a = inProcessWorker(redis, { projectDir: dir });
  closers.push(() => a.close());
  return { dir, dirigent, a };
}

describe('a worker whose own lease lapsed', { timeout: 60_000 }, () => {
  it('lets its runs go: the next drive of each claims it anew', async () => {
    const { dir, dirigent, a } = await slowProjectServed();

    const { run, runKey } = await lapseDuringCall(dirigent, dir, a);
    const b = inProcessWorker(redis, { projectDir: dir });
    closers.push(() => b.close());

    const record = await run.wait({ timeoutMs: 15_000 });
    expect(record.status).toBe('completed');
    expect(record.steps.map((s) => [s.name, s.status, s.attempts])).toEqual([
      ['nap', 'completed', 2],
    ]);
    // Whichever worker took the run up again claimed it anew: the claim of the drive that was
    // lost no longer holds, so nothing that drive still sends is written.
    expect(await redis.redis.hget(runKey, 'epoch')).toBe('2');
    expect(await redis.redis.zscore(workersKey(redis.prefix), a.runs.name)).not.toBeNull();
  });

  it("leaves a run's tool jobs to the drive that takes it up: none is cancelled or made again", async () => {
    const { dir, dirigent, a } = await slowProjectServed();

    // The lost drive's waits for the two jobs fail when it lets the run go, and a failed item
    // stops its foreach's other items: that must not cancel the jobs, which are the run's.
    const run = await dirigent.start({ directive: 'slow-each' });
    const runKey = `${redis.prefix}:run:${run.runId}`;
    const log = join(dir, 'steps.log');
    await waitFor(() => existsSync(log) && readFileSync(log, 'utf8') === 'start\nstart\n', {
      what: 'both calls',
    });
    await redis.redis.zrem(workersKey(redis.prefix), a.runs.name);

    const record = await run.wait({ timeoutMs: 15_000 });
    expect(record.error).toBeNull();
    expect(record.status).toBe('completed');
    expect(readFileSync(log, 'utf8')).toBe('start\nstart\n');
    expect(await redis.redis.hget(runKey, 'epoch')).toBe('2');
  });
});
