/**
 * Eager calls: a worker that serves both queues runs a step's call itself, in process, when its
 * tool worker has a free slot (or one frees within a moment) and no lock or rate limit applies;
 * no tool job is written. What a
 * queue gave a call still holds: its outcome is stored promptly, cancelling stops it, a worker
 * that closes lets it finish first, and calls that must be spread or gated go to the queue.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/engine/run-record.js';
import { QueueName } from '../../src/redis/queue-names.js';
import { RunsClient } from '../../src/redis/client/runs-client.js';
import { workersKey } from '../../src/redis/takeover/worker-lease.js';
import { alive } from '../support/process-alive.js';
import { until } from '../support/dirigent-processes.js';
import { projectRunSource } from '../support/directive-file.js';
import { inProcessWorker } from '../support/in-process-worker.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();
let project: string;
const open: { close(): Promise<void> }[] = [];

beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-eager-'));
});
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
  rmSync(project, { recursive: true, force: true });
});

/** A worker serving both queues in this process, as `dirigent worker` starts one. */
function worker(toolConcurrency = 8, slotWaitMs?: number) {
  const w = inProcessWorker(redis, {
    projectDir: project,
    toolConcurrency,
    ...(slotWaitMs !== undefined && { slotWaitMs }),
  });
  open.push(w);
  return w;
}

function client(): RunsClient {
  const c = new RunsClient(redis.connect(), redis.prefix);
  open.push(c);
  return c;
}

function toolsQueue(): Queue {
  const q = new Queue(QueueName.TOOLS, { connection: redis.connect(), prefix: redis.prefix });
  open.push(q);
  return q;
}

/** Writes `.ai/directives/<name>.md` with `body` inside `<directive>`, and starts a run of it. */
async function start(c: RunsClient, name: string, body: string): Promise<string> {
  const source = await projectRunSource(
    project,
    name,
    `<metadata><description>test</description></metadata>${body}`,
  );
  return c.start(source, {});
}

const echo = (name: string, value: string, extra = '') =>
  `<step name="${name}">${extra}<execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="${value}"/></execute></step>`;
const bash = (name: string, command: string) =>
  `<step name="${name}"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="${command}"/></execute></step>`;

async function jobsIn(q: Queue): Promise<number> {
  const counts = await q.getJobCounts();
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

/**
 * A worker with one tool slot and a long wait for it: run `holder` holds the slot (its call runs
 * until the project holds a file `go`), and run `waiter`'s step (`waiterStep`) waits for it.
 */
async function callWaitingForTheSlot(waiterStep: string) {
  const w = worker(1, 10_000);
  const c = client();
  const hold = `while [ ! -e go ]; do sleep 0.01; done; echo held`;
  const holder = await start(c, 'holder', `<process>${bash('hold', hold)}</process>`);
  await until(async () => (await c.store.load(holder))?.steps.hold?.runsOn !== undefined, 5000);
  const waiter = await start(c, 'waiter', `<process>${waiterStep}</process>`);
  await until(() => w.tools.waitingForSlot === 1, 5000, 'the call to wait for the slot');
  return { w, c, holder, waiter };
}

describe('eager calls', { timeout: 30_000 }, () => {
  it('runs the steps of a run on the worker that drives it, writing no tool job', async () => {
    worker();
    const c = client();
    const runId = await start(
      c,
      'two',
      `<process>${echo('a', 'one')}${echo('b', '${steps.a.result.v}-two')}</process>`,
    );
    const record = await c.wait(runId);
    expect(record.status).toBe('completed');
    expect(record.steps.map((s) => [s.name, s.status, s.attempts])).toEqual([
      ['a', 'completed', 1],
      ['b', 'completed', 1],
    ]);
    const stored = (await c.store.load(runId))!;
    expect(stored.steps.b!.result).toMatchObject({ v: 'one-two' });
    // Nothing in the stored steps says a call is under way any more.
    expect(Object.values(stored.steps).map((s) => s.runsOn)).toEqual([undefined, undefined]);
    expect(await jobsIn(toolsQueue())).toBe(0);
  });

  it('stores the outcome of a call made in process at once, and marks the call under way as running here', async () => {
    const w = worker();
    const c = client();
    const runId = await start(
      c,
      'slow-second',
      `<process>${echo('a', 'one')}${bash('b', 'sleep 2; echo b')}</process>`,
    );
    // While b sleeps, the store already has a's outcome and says where b's call runs.
    await until(async () => (await c.store.load(runId))?.steps.b?.runsOn !== undefined, 5000);
    const during = (await c.store.load(runId))!;
    expect(during.steps.a).toMatchObject({ status: 'completed', result: { v: 'one' } });
    expect(during.steps.b).toMatchObject({ status: 'running', runsOn: w.tools.worker.id });
    expect((await c.wait(runId)).status).toBe('completed');
  });

  it('sends to the tools queue a call whose step has a <lock>, and the item calls of a foreach', async () => {
    worker();
    const c = client();
    const locked = await start(
      c,
      'locked',
      `<process>${echo('a', 'x', '<lock key="k" limit="1"/>')}</process>`,
    );
    expect((await c.wait(locked)).status).toBe('completed');
    const q = toolsQueue();
    expect(await jobsIn(q)).toBe(1);
    const fanned = await start(
      c,
      'fanned',
      `<process><step name="each"><foreach over="\${inputs.items}" as="i" parallel="3"><execute item_type="tool" item_id="dirigent/util/echo"><param name="i" value="\${i}"/></execute></foreach></step></process><inputs><input name="items" type="array" default="[1,2,3]">items</input></inputs>`,
    );
    expect((await c.wait(fanned)).status).toBe('completed');
    expect(await jobsIn(q)).toBe(4);
  });

  it('sends to the tools queue a call whose tool declares its own concurrency limit', async () => {
    mkdirSync(join(project, '.ai', 'tools', 'gated'), { recursive: true });
    writeFileSync(
      join(project, '.ai', 'tools', 'gated', 'hi.yaml'),
      'version: 1.0.0\ntool_type: yaml\nexecutor_id: rye/core/runtimes/bash_runtime\ndescription: Says hi.\nconcurrency: { key: hi, limit: 1 }\nconfig:\n  command: echo hi\nconfig_schema: { type: object }\n',
    );
    worker();
    const c = client();
    const runId = await start(
      c,
      'gated',
      `<process><step name="hi"><execute item_type="tool" item_id="gated/hi"/></step></process>`,
    );
    const record = await c.wait(runId);
    expect(record.status).toBe('completed');
    expect(await jobsIn(toolsQueue())).toBe(1);
  });

  it('sends a call to the queue when the tool worker has no free slot', async () => {
    worker(1);
    const c = client();
    const long = await start(c, 'long', `<process>${bash('nap', 'sleep 2; echo done')}</process>`);
    await until(async () => (await c.store.load(long))?.steps.nap?.runsOn !== undefined, 5000);
    const short = await start(c, 'short', `<process>${echo('a', 'x')}</process>`);
    // The short run ends while the long call still holds the only slot for calls in process.
    const done = await c.wait(short);
    expect(done.status).toBe('completed');
    expect((await c.store.load(long))!.record.status).toBe('running');
    expect(await jobsIn(toolsQueue())).toBe(1);
    expect((await c.wait(long)).status).toBe('completed');
  });

  it('runs a call in process once a slot of its own worker frees within the wait, writing no tool job', async () => {
    const { c, holder, waiter } = await callWaitingForTheSlot(echo('a', 'x'));
    writeFileSync(join(project, 'go'), '');
    expect((await c.wait(waiter)).status).toBe('completed');
    expect((await c.wait(holder)).status).toBe('completed');
    expect(await jobsIn(toolsQueue())).toBe(0);
  });

  it('ends the wait for a slot of a call whose run is cancelled, writing no tool job', async () => {
    const { w, c, holder, waiter } = await callWaitingForTheSlot(echo('a', 'x'));
    expect((await c.cancel(waiter, 'enough')).status).toBe('cancelled');
    expect(w.tools.waitingForSlot).toBe(0);
    expect(await jobsIn(toolsQueue())).toBe(0);
    expect((await c.cancel(holder, 'enough')).status).toBe('cancelled');
  });

  it('never runs a call that waited for a slot in a drive its worker lost: the run makes it once, anew', async () => {
    const { w, c, holder, waiter } = await callWaitingForTheSlot(
      bash('mark', 'echo ran &gt;&gt; waiter.log'),
    );
    // The worker's lease lapses (as if it had been held up): its next renewal tells it, and it
    // stops driving both runs, ending the call under way and the wait alike.
    await redis.redis.zrem(workersKey(redis.prefix), w.runs.name);
    await until(() => w.tools.waitingForSlot === 0, 5000, 'the wait to end');
    writeFileSync(join(project, 'go'), '');
    expect((await c.wait(waiter)).status).toBe('completed');
    expect((await c.wait(holder)).status).toBe('completed');
    expect(readFileSync(join(project, 'waiter.log'), 'utf8')).toBe('ran\n');
  });

  it('stops a call made in process, and its process group, when the run is cancelled', async () => {
    worker();
    const c = client();
    const runId = await start(
      c,
      'hang',
      `<process>${bash('hang', 'sleep 60 &amp; echo $! &gt; child.pid; wait')}</process>`,
    );
    await until(() => existsSync(join(project, 'child.pid')), 5000);
    const pid = Number(readFileSync(join(project, 'child.pid'), 'utf8'));
    expect(alive(pid)).toBe(true);
    const record: RunRecord = await c.cancel(runId, 'enough');
    expect(record.status).toBe('cancelled');
    await until(() => !alive(pid), 5000, 'the tool process to stop');
  });

  it('delivers a signal to a run whose other branch runs a long call in process', async () => {
    worker();
    const c = client();
    const runId = await start(
      c,
      'approve-while-building',
      `<process><parallel name="both"><branch name="build">${bash('compile', 'sleep 3; echo built')}</branch><branch name="gate"><step name="approve"><wait signal="approve"/></step></branch></parallel></process>`,
    );
    await until(async () => (await c.store.load(runId))?.steps.compile?.runsOn !== undefined, 5000);
    const sent = Date.now();
    const afterSignal = await c.signal(runId, 'approve', { ok: true });
    // Heard while the build still runs: the run settles when it ends, not before.
    expect(afterSignal.status).toBe('completed');
    const stored = (await c.store.load(runId))!;
    expect(stored.steps.approve!.endedAt!).toBeLessThan(stored.steps.compile!.endedAt!);
    expect(stored.steps.approve!.endedAt! - sent).toBeLessThan(1000);
  });

  it('lets a call made in process finish when its worker closes, then hands the run to another', async () => {
    const a = worker();
    const c = client();
    const runId = await start(
      c,
      'handed',
      `<process>${bash('first', 'sleep 1; echo first >> steps.log')}${bash('second', 'echo second >> steps.log')}</process>`,
    );
    await until(async () => (await c.store.load(runId))?.steps.first?.runsOn !== undefined, 5000);
    worker();
    await a.close();
    const record = await c.wait(runId);
    expect(record.status).toBe('completed');
    expect(record.steps.map((s) => [s.name, s.attempts])).toEqual([
      ['first', 1],
      ['second', 1],
    ]);
    expect(readFileSync(join(project, 'steps.log'), 'utf8')).toBe('first\nsecond\n');
  });
});
