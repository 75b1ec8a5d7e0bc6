/**
 * Groups of starts: the starts a client makes in one turn of its event loop, with no run ids of
 * their own, share one job of the runs queue, and the worker that takes it up drives each run as
 * a job of its own would. A queued run of a group is found by `status`; a run that waits for a
 * signal stays in the store; one that parks, whose worker closes, or that cannot begin there goes
 * on in a job of its own; a group whose worker dies is taken over, and every run of it ends once.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fromJobError } from '../../src/redis/job-error.js';
import { QueueName } from '../../src/redis/queue-names.js';
import type { RunJobData } from '../../src/redis/run-job.js';
import { RunsClient } from '../../src/redis/client/runs-client.js';
import type { StartOptions } from '../../src/redis/client/start-sender.js';
import { projectRunSource } from '../support/directive-file.js';
import { dirigentProcesses, until } from '../support/dirigent-processes.js';
import { defaultWorkerEnv, inProcessWorker } from '../support/in-process-worker.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();
const processes = dirigentProcesses();
let project: string;
const open: { close(): Promise<void> }[] = [];

beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-start-groups-'));
});
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
  rmSync(project, { recursive: true, force: true });
});

/**
 * A worker in this process. With `eager`, one serving both queues (a step's call runs in it);
 * without, a run worker whose calls are tool jobs, and a tool worker apart.
 */
function worker(options: { eager?: boolean; projectDir?: string; concurrency?: number } = {}) {
  const w = inProcessWorker(redis, { projectDir: project, ...options });
  open.push(w);
  return w;
}

function client(options: StartOptions = {}): RunsClient {
  const c = new RunsClient(redis.connect(), redis.prefix, undefined, options);
  open.push(c);
  return c;
}

function runsQueue(): Queue<RunJobData> {
  const q = new Queue<RunJobData>(QueueName.RUNS, {
    connection: redis.connect(),
    prefix: redis.prefix,
  });
  open.push(q);
  return q;
}

/** Writes `.ai/directives/<name>.md` under `dir` with `body`, and what a start job carries of it. */
function source(name: string, body: string, dir = project) {
  return projectRunSource(dir, name, body);
}

const echo = `<process><step name="say"><execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="\${inputs.n}"/></execute></step></process><outputs><output name="n" value="\${steps.say.result.v}"/></outputs>`;
const inputs = `<inputs><input name="n" type="integer" required="true"/></inputs>`;
const bash = (command: string) =>
  `<process><step name="work"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="${command}"/></execute></step></process>`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('groups of starts', { timeout: 60_000 }, () => {
  it('sends starts made together as one job, finds its runs while queued, and ends each', async () => {
    const c = client();
    const src = await source('count', `${inputs}${echo}`);
    const ids = await Promise.all(Array.from({ length: 7 }, (_, n) => c.start(src, { n })));
    expect(new Set(ids).size).toBe(7);
    for (const id of ids) expect(id).toMatch(UUID);

    // Start jobs carry a run's priority (see engine/run-priority.ts): they wait as prioritized.
    const waiting = await runsQueue().getJobs(['prioritized']);
    expect(waiting).toHaveLength(1);
    const group = waiting[0]!.data;
    expect(group.kind).toBe('starts');
    if (group.kind !== 'starts') return;
    expect(group.runs.map((r) => r.runId)).toEqual(ids);
    expect(group.sources).toHaveLength(1); // one directive, carried once
    for (const id of ids)
      expect(await c.status(id)).toMatchObject({ runId: id, status: 'queued', directive: 'count' });

    worker();
    const records = await Promise.all(ids.map((id) => c.wait(id, 20_000)));
    // Each run got its own inputs.
    expect(records.map((r) => [r.status, String(r.outputs?.n), r.steps.length])).toEqual(
      ids.map((_, n) => ['completed', String(n), 1]),
    );
    expect(
      await runsQueue().getJobCounts('wait', 'prioritized', 'active', 'delayed', 'failed'),
    ).toEqual({
      wait: 0,
      prioritized: 0,
      active: 0,
      delayed: 0,
      failed: 0,
    });
  });

  it('caps a group at startGroup runs, and sends a lone start or one with its own id alone', async () => {
    const c = client({ startGroup: 3 });
    const src = await source('count', `${inputs}${echo}`);
    const ids = await Promise.all(Array.from({ length: 7 }, (_, n) => c.start(src, { n })));
    const own = await c.start(src, { n: 9 }, { runId: 'my-own-id' });
    expect(own).toBe('my-own-id');
    const jobs = await runsQueue().getJobs(['prioritized']);
    const shapes = jobs.map((j) =>
      j.data.kind === 'starts' ? j.data.runs.length : `${j.data.kind} ${j.id}`,
    );
    // Two groups of three; the seventh start alone, under its run id, as any lone start.
    expect(shapes).toHaveLength(4);
    expect(shapes).toEqual(expect.arrayContaining([3, 3, `start ${ids[6]}`, 'start my-own-id']));

    worker();
    for (const id of [...ids, own]) expect((await c.wait(id, 20_000)).status).toBe('completed');
  });

  it('drives no more runs of a group at once than the worker drives runs', async () => {
    const c = client();
    const log = join(project, 'overlap.log');
    const src = await source('busy', bash(`echo + >> ${log}; sleep 0.4; echo - >> ${log}`));
    const ids = await Promise.all(Array.from({ length: 6 }, () => c.start(src, {})));
    worker({ concurrency: 2 });
    for (const id of ids) expect((await c.wait(id, 30_000)).status).toBe('completed');
    let now = 0;
    let most = 0;
    for (const mark of readFileSync(log, 'utf8').trim().split('\n')) {
      now += mark === '+' ? 1 : -1;
      most = Math.max(most, now);
    }
    expect(most).toBe(2);
  });

  it('leaves a run that waits for a signal in the store, and ends it on its signal', async () => {
    const c = client();
    const hold = await source(
      'hold',
      `<process><step name="hold"><wait signal="go"/></step></process>`,
    );
    const quick = await source('quick', bash('true'));
    const [held, done] = await Promise.all([c.start(hold, {}), c.start(quick, {})]);
    worker();
    expect((await c.wait(held, 20_000)).status).toBe('waiting');
    expect((await c.wait(done, 20_000)).status).toBe('completed');
    expect((await c.signal(held, 'go', 'yes')).status).toBe('completed');
  });

  it('asks for no more jobs while the runs of a group fill its slots, and again once they end', async () => {
    const c = client({ startGroup: 2 });
    const src = await source('nap', bash('sleep 1'));
    const w = worker({ concurrency: 2 });
    const ids = await Promise.all(Array.from({ length: 4 }, () => c.start(src, {})));
    // BullMQ counts jobs: a group of two fills both slots, so the worker takes one job at a time.
    await until(() => w.runs.worker.concurrency === 1, 5000, 'a group taken');
    for (const id of ids) expect((await c.wait(id, 30_000)).status).toBe('completed');
    await until(() => w.runs.worker.concurrency === 2, 5000, 'the slots free');
  });

  it('tells of a run that ends before the rest of its group, without waiting for them', async () => {
    const c = client();
    const events = new QueueEvents(QueueName.RUNS, {
      connection: redis.connect(),
      prefix: redis.prefix,
    });
    open.push(events);
    const told: { runs: { runId: string; status: string }[] }[] = [];
    events.on('progress', ({ data }) => void told.push(data as (typeof told)[number]));
    await events.waitUntilReady();
    const quick = await source('quick', bash('true'));
    const slow = await source('slow', bash('sleep 2'));
    const [done, later] = await Promise.all([c.start(quick, {}), c.start(slow, {})]);
    worker();
    expect((await c.wait(done, 20_000)).status).toBe('completed');
    await until(() => told.length > 0, 5000, 'progress');
    expect(told[0]!.runs).toEqual([expect.objectContaining({ runId: done, status: 'completed' })]);
    // Told while the other run of its group still had its call under way.
    expect((await c.status(later)).status).not.toBe('completed');
    expect((await c.wait(later, 20_000)).status).toBe('completed');
  });

  it('gives a run that parks a job of its own, and wakes it when its tool job ends', async () => {
    const c = client();
    // Long enough to park (its call a tool job, idle for 2 s) well before it ends.
    const long = await source('long', bash('sleep 6; echo done'));
    const quick = await source('quick', bash('true'));
    const [parked, done] = await Promise.all([c.start(long, {}), c.start(quick, {})]);
    worker({ eager: false });
    expect((await c.wait(done, 20_000)).status).toBe('completed');
    const q = runsQueue();
    // Parked (its calls a tool job for 2 s): its own job waits in the delayed set.
    await until(async () => (await q.getJob(parked))?.data.kind === 'start', 10_000, 'own job');
    const own = (await q.getJob(parked))!;
    expect(own.data).toMatchObject({ kind: 'start', runId: parked, alone: true });
    const record = await c.wait(parked, 20_000);
    expect(record.status).toBe('completed');
    expect(record.steps.map((s) => [s.status, s.attempts])).toEqual([['completed', 1]]);
  });

  it('fails a run that cannot begin on a job of its own, and the rest of its group runs', async () => {
    const c = client();
    const elsewhere = mkdtempSync(join(tmpdir(), 'dirigent-start-groups-other-'));
    try {
      // The worker's copy of `tool-work` differs from the one the start carries.
      await source('tool-work', bash('echo mine'));
      const theirs = await source('tool-work', bash('echo theirs'), elsewhere);
      const quick = await source('quick', bash('true'));
      const [bad, good] = await Promise.all([c.start(theirs, {}), c.start(quick, {})]);
      worker();
      expect((await c.wait(good, 20_000)).status).toBe('completed');
      const failure = await c.wait(bad, 20_000).catch((err: unknown) => err);
      expect(failure).toMatchObject({ code: 'DIRECTIVE_MISMATCH' });
      await expect(c.status(bad)).rejects.toMatchObject({ code: 'DIRECTIVE_MISMATCH' });
      const own = (await runsQueue().getJob(bad))!;
      expect(own.data).toMatchObject({ kind: 'start', alone: true });
      expect(own.failedReason).toContain('tool-work');
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('fails a malformed group whole, before any run of it starts, saying what is wrong', async () => {
    const q = runsQueue();
    const job = await q.add('starts', {
      kind: 'starts',
      sources: [],
      runs: [{ runId: 'from-elsewhere', source: 0, inputs: {} }],
    });
    worker();
    await until(async () => (await job.getState()) === 'failed', 10_000, 'the group failed');
    const failed = (await q.getJob(job.id!))!;
    expect(fromJobError(failed.failedReason, 'group')).toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('run 0 (from-elsewhere) names no source of the group'),
    });
    expect(await redis.redis.exists(`${redis.prefix}:run:from-elsewhere`)).toBe(0);
  });

  it('hands the runs of a closing worker to another, each in a job of its own', async () => {
    const c = client();
    const marker = join(project, 'made.log');
    const src = await source('slow', bash(`sleep 1; echo x >> ${marker}`));
    const ids = await Promise.all([c.start(src, {}), c.start(src, {}), c.start(src, {})]);
    const first = worker({ eager: false });
    await until(
      async () => (await Promise.all(ids.map((id) => c.store.load(id)))).every((s) => s),
      10_000,
      'every run stored',
    );
    await first.close();
    // Handed back: each run waits in a job of its own for the next worker.
    const q = runsQueue();
    const own = await Promise.all(
      ids.map(async (id) => {
        const job = await q.getJob(id);
        return [job?.data, await job?.getState()];
      }),
    );
    expect(own).toEqual(
      ids.map((runId) => [expect.objectContaining({ runId, alone: true }), 'waiting']),
    );
    worker({ eager: false });
    const records = await Promise.all(ids.map((id) => c.wait(id, 20_000)));
    expect(records.map((r) => [r.status, r.steps[0]?.attempts])).toEqual(
      ids.map(() => ['completed', 1]),
    );
  });
});

describe('a group of starts whose worker is killed', { timeout: 90_000 }, () => {
  it('is taken over, and every run of it ends once, completed', async () => {
    const begun = join(project, 'begun.log');
    const src = await source('slow', `${inputs}${bash(`echo \${inputs.n} >> ${begun}; sleep 2`)}`);
    const c = client();
    const ids = await Promise.all(Array.from({ length: 5 }, (_, n) => c.start(src, { n })));
    const doomed = await processes.worker(defaultWorkerEnv(redis), '--project', project);
    // Every run has begun its step on the doomed worker.
    const lines = () => (existsSync(begun) ? readFileSync(begun, 'utf8').trim().split('\n') : []);
    await until(() => lines().length >= 5, 15_000, 'every step begun');
    doomed.kill('SIGKILL');
    await processes.worker(defaultWorkerEnv(redis), '--project', project);
    const records = await Promise.all(ids.map((id) => c.wait(id, 60_000)));
    expect(records.map((r) => r.status)).toEqual(ids.map(() => 'completed'));
    expect(records.map((r) => r.steps.map((s) => s.name))).toEqual(ids.map(() => ['work']));
  });
});
