/**
 * Recovery in seconds, with the default settings: a worker killed with SIGKILL has its runs and
 * tool calls taken over by another within 3 s (a call it ran in process, or as a tool job, counts
 * as a lost attempt either way), and a worker paused past its lease (SIGSTOP) does not write to
 * the run another worker took over when it wakes: it stops and says so.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RedisRunStore } from '../../src/redis/run-store/redis-run-store.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentProcesses, until } from '../support/dirigent-processes.js';
import { defaultWorkerEnv } from '../support/in-process-worker.js';
import { alive } from '../support/process-alive.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();
const processes = dirigentProcesses();
let project: string;

beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-takeover-'));
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

/** Default settings: no lock or lease override, only where Redis is. */
const env = () => defaultWorkerEnv(redis);

/**
 * A worker on both queues (it runs a step's call in process when it can), or on `queues` only,
 * and everything it logs from now on.
 */
async function worker(queues = 'runs,tools'): Promise<{ child: ChildProcess; log: () => string }> {
  const child = await processes.worker(env(), '--queues', queues, '--project', project);
  let log = '';
  child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  return { child, log: () => log };
}

const lines = (file: string) =>
  existsSync(join(project, file))
    ? readFileSync(join(project, file), 'utf8').trim().split('\n')
    : [];

const bash = (name: string, command: string) =>
  `<step name="${name}"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="${command}"/></execute></step>`;

/** Starts a run of `xml` detached, resolving with its id. */
async function start(xml: string): Promise<string> {
  const file = writeDirective(project, 'work', xml);
  const r = await processes.cli(env(), 'run', file, '--detach', '--json', '--project', project);
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { runId: string }).runId;
}

/**
 * A two-step run whose first step (6 s) is under way on worker `a`, and a second worker `b` that
 * serves once it is: the store to read the run from, both workers and the run's id. With
 * `quickRetry`, an attempt of the first step made again does not sleep.
 */
async function slowRunOnFirstWorker({ quickRetry = false } = {}) {
  const store = new RedisRunStore(redis.redis, { prefix: redis.prefix });
  const a = await worker();
  const nap = quickRetry ? '[ $(grep -c start steps.log) = 1 ] && sleep 6' : 'sleep 6';
  const first = `echo start >> steps.log; ${nap}; echo end >> steps.log`;
  const runId = await start(
    `<process>${bash('first', first)}${bash('second', 'echo second >> steps.log')}</process>`,
  );
  await until(() => lines('steps.log').includes('start'));
  const b = await worker();
  return { store, a, b, runId };
}

describe('takeover', { timeout: 60_000 }, () => {
  it('takes over the runs and tool calls of a worker killed with SIGKILL within 3 s (a 1.5 s lease)', async () => {
    const { store, a, b, runId } = await slowRunOnFirstWorker({ quickRetry: true });
    const killedAt = Date.now();
    a.child.kill('SIGKILL');
    await until(() => b.log().includes(`took over run ${runId}`), 10_000, 'the takeover');
    const takeoverMs = Date.now() - killedAt;
    console.log(`takeover after SIGKILL: ${takeoverMs} ms`);
    expect(takeoverMs).toBeLessThan(3000);
    await until(async () => (await store.load(runId))?.record.status === 'completed', 15_000);
    const record = (await store.load(runId))!.record;
    // The call lost with the worker counts as an attempt, and was made again; the next step
    // ran once. (The killed worker's shell died with it: its copy never reached "end".)
    expect(record.steps.map((s) => [s.name, s.status, s.attempts])).toEqual([
      ['first', 'completed', 2],
      ['second', 'completed', 1],
    ]);
    expect(lines('steps.log').filter((l) => l === 'start')).toHaveLength(2);
    expect(lines('steps.log').filter((l) => l === 'end')).toHaveLength(1);
    expect(lines('steps.log').filter((l) => l === 'second')).toHaveLength(1);
    // The call ran in the process that drove the run, so the dead worker's run job is all
    // there was to take over.
    expect(b.log()).toMatch(/took over 1 job\(s\) of worker dirigent-runs\//);
  });

  it.each([
    ['ran in the process driving the run', 'runs,tools'],
    ['ran as a job on a worker of its own', 'tools'],
  ])(
    'fails the step with WORKER_LOST when the lost call was its last attempt (a call that %s)',
    async (_how, queues) => {
      const store = new RedisRunStore(redis.redis, { prefix: redis.prefix });
      const runs = queues === 'tools' ? await worker('runs') : undefined;
      const a = await worker(queues);
      const runId = await start(
        `<process><step name="once"><retry attempts="1"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo start >> steps.log; sleep 30"/></execute></step></process>`,
      );
      await until(() => lines('steps.log').includes('start'));
      const b = await worker();
      a.child.kill('SIGKILL');
      await until(async () => (await store.load(runId))?.record.status === 'failed', 15_000);
      const record = (await store.load(runId))!.record;
      expect(record.error).toMatchObject({ code: 'WORKER_LOST', step: 'once' });
      expect(record.error!.message).toMatch(/was lost with the worker running it/);
      expect(lines('steps.log').filter((l) => l === 'start')).toHaveLength(1);
      // Whichever live worker saw the lease lapse first took the dead one's job over.
      const kind = queues === 'tools' ? 'tools' : 'runs';
      expect(`${runs?.log() ?? ''}${b.log()}`).toMatch(
        new RegExp(`took over 1 job\\(s\\) of worker dirigent-${kind}/`),
      );
    },
  );

  it.each([
    ['in the process driving the run', 'runs,tools'],
    ['as a job on a worker of its own', 'tools'],
  ])(
    'kills a call started %s with its worker (SIGKILL), so the call made again runs alone',
    async (_how, queues) => {
      const store = new RedisRunStore(redis.redis, { prefix: redis.prefix });
      const runs = queues === 'tools' ? await worker('runs') : undefined;
      const a = await worker(queues);
      // Each attempt records its processes (the shell, a child, a grandchild) in pids.N and
      // says "overlap" if a process of an earlier attempt still runs when it starts. A zombie
      // (dead, its exit status not yet collected) runs nothing: `kill -0` would count it, and an
      // orphan's zombie may wait a second or two for an init that reaps lazily.
      const command = [
        'n=$(ls pids.* 2>/dev/null | wc -l)',
        'for f in pids.*; do [ -e "$f" ] || continue; for p in $(cat "$f"); do s=$(cut -d")" -f2 /proc/$p/stat 2>/dev/null | cut -c2); [ -n "$s" ] && [ "$s" != Z ] && echo overlap >> steps.log; done; done',
        'echo $$ > pids.$n',
        'sleep 30 & echo $! >> pids.$n',
        '(sleep 30 & echo $! >> pids.$n; wait) & echo start >> steps.log',
        '[ "$n" = 0 ] && wait',
        'echo end >> steps.log',
      ].join('; ');
      const runId = await start(
        `<process><step name="once"><retry attempts="2" delay_ms="0"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="${command.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}"/></execute></step></process>`,
      );
      await until(() => lines('steps.log').includes('start') && lines('pids.0').length === 3);
      const first = lines('pids.0').map(Number);
      expect(first.every((pid) => alive(pid))).toBe(true);
      const b = await worker();
      const killed = Date.now();
      a.child.kill('SIGKILL'); // the worker alone, not its group
      await until(() => first.every((pid) => !alive(pid)), 2000, "the call's processes to die");
      console.log(`call processes gone ${Date.now() - killed} ms after SIGKILL`);
      await until(async () => (await store.load(runId))?.record.status === 'completed', 20_000);
      expect(lines('steps.log')).toEqual(['start', 'start', 'end']);
      expect(`${runs?.log() ?? ''}${b.log()}`).toMatch(/took over 1 job\(s\) of worker/);
    },
  );

  it.each([
    ['in the process driving the run', 'runs,tools', 2],
    ['as a job on a worker of its own', 'runs', 1],
  ] as const)(
    'takes over a run killed (SIGKILL) during its compensations, whose calls run %s: each compensation runs to its end once, the ones that ended not again',
    async (_how, queues, reserveAttempts) => {
      const store = new RedisRunStore(redis.redis, { prefix: redis.prefix });
      // Calls go to a tools worker that lives on, or run in the process that drives the run.
      if (queues === 'runs') await worker('tools');
      const a = await worker(queues);
      // Each compensation says when it starts and, 3 s later, that it has done its work.
      const undo = (what: string) =>
        `<compensate><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo ${what}-start >> undo.log; sleep 3; echo ${what} >> undo.log"/></execute></compensate>`;
      const step = (name: string, command: string, compensate = '') =>
        `<step name="${name}"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="${command}"/></execute><retry attempts="1"/>${compensate}</step>`;
      const runId = await start(
        `<process>${step('reserve', 'echo -n r1', undo('unreserve'))}${step('charge', 'echo -n c1', undo('refund'))}${step('ship', 'exit 1')}</process>`,
      );
      // The second compensation is under way, and the store knows it (where its call runs).
      await until(() => lines('undo.log').includes('unreserve-start'), 20_000, 'unreserve');
      await until(async () => {
        const stored = await store.load(runId);
        const rec = stored?.steps['compensate:reserve'];
        return (
          stored?.record.steps.some((s) => s.name === 'compensate:charge') === true &&
          rec?.status === 'running' &&
          (queues === 'runs' || rec.runsOn !== undefined)
        );
      });
      expect((await store.load(runId))!.record.status).toBe('running');
      const b = await worker(queues);
      a.child.kill('SIGKILL');
      await until(() => b.log().includes(`took over run ${runId}`), 10_000, 'the takeover');
      await until(async () => (await store.load(runId))?.record.status === 'failed', 20_000);
      const record = (await store.load(runId))!.record;
      expect(record.error).toMatchObject({ code: 'COMMAND_FAILED', step: 'ship' });
      // A call lost with its worker counts as an attempt (and was made again); one that ran as
      // a job was found again by the worker that took over, not made twice.
      expect(record.steps.map((s) => `${s.name}:${s.status}:${s.attempts}`)).toEqual([
        'reserve:completed:1',
        'charge:completed:1',
        'ship:failed:1',
        'compensate:charge:completed:1',
        `compensate:reserve:completed:${reserveAttempts}`,
      ]);
      const log = lines('undo.log');
      expect(log.filter((l) => l === 'refund-start')).toHaveLength(1);
      expect(log.filter((l) => l === 'refund')).toHaveLength(1);
      expect(log.filter((l) => l === 'unreserve')).toHaveLength(1);
      expect(log.filter((l) => l === 'unreserve-start')).toHaveLength(reserveAttempts);
    },
  );

  it('keeps a worker woken from a pause past its lease from starting the next call beside the new driver', async () => {
    const { store, a, b, runId } = await slowRunOnFirstWorker();
    a.child.kill('SIGSTOP');
    try {
      await until(() => b.log().includes(`took over run ${runId}`), 10_000, 'the takeover');
      // The paused worker's own call (its tool runs on) ends while the new driver's runs.
      await until(() => lines('steps.log').includes('end'), 10_000, "the first call's end");
    } finally {
      a.child.kill('SIGCONT');
    }
    // Awake, it sees its step end: it must ask its lease before it starts the next call.
    await until(() => /was taken over|lease lapsed/.test(a.log()), 10_000, 'the woken worker');
    await until(async () => (await store.load(runId))?.record.status === 'completed', 20_000);
    const drained = new Promise((r) => a.child.once('exit', r));
    a.child.kill('SIGTERM');
    await drained;
    // It started no call of the next step (one stopped at once would still have begun).
    expect(a.log()).not.toMatch(/"step":"second"/);
    expect(lines('steps.log').filter((l) => l === 'second')).toEqual(['second']);
  });

  it('keeps a worker paused past its lease (SIGSTOP) from writing to the run another took over', async () => {
    // Both attempts take 6 s: the paused worker wakes seconds after its own call ended.
    const { store, a, b, runId } = await slowRunOnFirstWorker();
    a.child.kill('SIGSTOP');
    try {
      await until(() => b.log().includes(`took over run ${runId}`), 10_000, 'the takeover');
      await until(async () => (await store.load(runId))?.record.status === 'completed', 15_000);
    } finally {
      a.child.kill('SIGCONT');
    }
    const settled = (await store.load(runId))!;
    // Awake again, the paused worker finds its lease lapsed and its writes refused; drained, it
    // has written whatever it was going to write.
    await until(
      () => /lease lapsed|was taken over|has not answered/.test(a.log()),
      10_000,
      'the paused worker',
    );
    const drained = new Promise((r) => a.child.once('exit', r));
    a.child.kill('SIGTERM');
    await drained;
    const after = (await store.load(runId))!;
    expect(after.version).toBe(settled.version);
    expect(after.record.status).toBe('completed');
    expect(after.record.steps.map((s) => s.name)).toEqual(['first', 'second']);
    expect(lines('steps.log').filter((l) => l === 'second')).toEqual(['second']);
  });
});
