/**
 * Distributed runs with real worker processes (`dirigent worker`) on the real Redis: work is
 * shared between workers, a worker killed with SIGKILL loses nothing, the process driving a run
 * can die between or during steps, cancellation reaches a tool on another worker, waiting runs
 * and their timers survive a restart of every process.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QueueName } from '../../src/redis/queue-names.js';
import { RedisRunStore } from '../../src/redis/run-store/redis-run-store.js';
import { alive } from '../support/process-alive.js';
import { redisForTest } from '../support/redis.js';
import { REPO_ROOT } from '../support/paths.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentProcesses, until } from '../support/dirigent-processes.js';

const WORKER_ENTRY = join(REPO_ROOT, 'dist', 'workers', 'worker.js');
const redis = redisForTest();
let project: string;
/** Every process a test starts (workers and CLI commands), killed after it if still running. */
const processes = dirigentProcesses();

beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-dist-'));
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

const env = () => ({
  ...process.env,
  REDIS_URL: redis.url,
  DIRIGENT_PREFIX: redis.prefix,
  DIRIGENT_LOCK_MS: '2000',
});

/** Starts `dirigent worker` (or the env-configured `dist/workers/worker.js`) once it serves. */
function startWorker(
  queues = 'runs,tools',
  entry: 'cli' | 'workers' = 'cli',
): Promise<ChildProcess> {
  return entry === 'cli'
    ? processes.worker(env(), '--queues', queues, '--project', project)
    : processes.serving({ ...env(), DIRIGENT_QUEUES: queues, DIRIGENT_PROJECT: project }, [
        WORKER_ENTRY,
      ]);
}

function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return processes.cli(env(), ...args, '--project', project);
}

async function runJson(...args: string[]) {
  const r = await cli('run', ...args, '--json');
  return {
    ...r,
    record: JSON.parse(r.stdout) as {
      runId: string;
      status: string;
      outputs: Record<string, unknown> | null;
      steps: { name: string; status: string }[];
      error: { code: string } | null;
    },
  };
}

function directive(name: string, xml: string): string {
  return writeDirective(project, name, xml);
}

const bash = (name: string, command: string, extra = '') =>
  `<step name="${name}"${extra}><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="${command}"/></execute></step>`;

describe('distributed runs', { timeout: 60_000 }, () => {
  it('runs a directive on a worker with the same record and exit status as embedded', async () => {
    await startWorker();
    const file = directive(
      'greet',
      `<inputs><input name="who" type="string"/></inputs><process>${bash('hello', 'echo Hello, {input:who}!')}</process><outputs><output name="text" value="\${steps.hello.result.stdout}"/></outputs>`,
    );
    const { code, record } = await runJson(file, '--input', 'who=Ada');
    expect(code).toBe(0);
    expect(record).toMatchObject({ status: 'completed', outputs: { text: 'Hello, Ada!\n' } });
    const status = await cli('status', record.runId, '--json');
    expect(JSON.parse(status.stdout)).toMatchObject({ runId: record.runId, status: 'completed' });
    const list = await cli('runs', '--status', 'completed', '--json');
    expect((JSON.parse(list.stdout) as { runId: string }[]).map((r) => r.runId)).toEqual([
      record.runId,
    ]);
    const shown = await cli('run', file, '--input', 'who=Bo');
    expect(shown.stdout).toMatch(/▸ hello\n✓ hello completed in \d+ms\n/);
    expect(shown.stdout).toContain('Hello, Bo!');
    // One attempt: the default retries would add their 3 s of backoff to the same outcome.
    const failing = directive(
      'fails',
      `<process><step name="boom"><retry attempts="1"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="exit 3"/></execute></step></process>`,
    );
    expect((await runJson(failing)).code).toBe(1);
  });

  it('shares the items of a parallel foreach between two workers and loses none of 200 results', async () => {
    await Promise.all([startWorker(), startWorker('runs,tools', 'workers')]);
    const file = directive(
      'fan',
      `<process><step name="each"><foreach over="\${inputs.items}" as="n" parallel="20" collect="out"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo \${n}:$PPID"/></execute></foreach></step></process><inputs><input name="items" type="array"/></inputs><outputs><output name="out" value="\${steps.each.result}"/></outputs>`,
    );
    const items = Array.from({ length: 200 }, (_, i) => i);
    const { record } = await runJson(file, '--inputs', JSON.stringify({ items }));
    expect(record.status).toBe('completed');
    const out = record.outputs!.out as { stdout: string }[];
    expect(out.map((o) => Number(o.stdout.split(':')[0]))).toEqual(items);
    const pids = new Set(out.map((o) => o.stdout.trim().split(':')[1]));
    expect(pids.size, 'both workers ran items').toBe(2);
  });

  it('finishes a run whose worker is killed with SIGKILL in the middle of a tool', async () => {
    const first = await startWorker();
    const file = directive(
      'slow',
      `<process>${bash('work', 'echo started >> steps.log; sleep 1; echo done')}</process>`,
    );
    const pending = runJson(file);
    await until(() => existsSync(join(project, 'steps.log')));
    first.kill('SIGKILL');
    await startWorker();
    const { record } = await pending;
    expect(record.status).toBe('completed');
    expect(
      readFileSync(join(project, 'steps.log'), 'utf8').trim().split('\n').length,
    ).toBeGreaterThanOrEqual(1);
  });

  it('resumes a run whose driving process dies between steps, without running ended steps again', async () => {
    const [, driver] = await Promise.all([startWorker('tools'), startWorker('runs')]);
    const steps = ['a', 'b', 'c'].map((s) => bash(s, `echo ${s} >> steps.log; sleep 0.4`)).join('');
    const file = directive('three', `<process>${steps}</process>`);
    const pending = runJson(file);
    await until(
      () =>
        existsSync(join(project, 'steps.log')) &&
        readFileSync(join(project, 'steps.log'), 'utf8').includes('b'),
    );
    driver.kill('SIGKILL');
    await startWorker('runs');
    const { record } = await pending;
    expect(record.status).toBe('completed');
    expect(record.steps.map((s) => s.name)).toEqual(['a', 'b', 'c']);
    expect(readFileSync(join(project, 'steps.log'), 'utf8')).toBe('a\nb\nc\n');
  });

  it('cancels a run and kills its tool on another worker', async () => {
    await Promise.all([startWorker('runs'), startWorker('tools')]);
    const file = directive(
      'hang',
      `<process>${bash('hang', 'sleep 60 & echo $! > child.pid; wait')}</process>`,
    );
    const started = await cli('run', file, '--detach', '--json');
    const { runId } = JSON.parse(started.stdout) as { runId: string };
    await until(() => existsSync(join(project, 'child.pid')));
    const pid = Number(readFileSync(join(project, 'child.pid'), 'utf8'));
    const cancelled = await cli('cancel', runId, '--json');
    expect(cancelled.code).toBe(1);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ status: 'cancelled' });
    await until(() => !alive(pid), 5000);
  });

  it('keeps a waiting run through a restart of every process, and resumes it on its signal', async () => {
    const w = await startWorker();
    const file = directive(
      'ask',
      `<process><step name="ok"><instruction>Ship it?</instruction></step><step name="after"><render>answer: \${steps.ok.result}</render></step></process><outputs><output name="text" value="\${steps.after.result}"/></outputs>`,
    );
    const { code, record } = await runJson(file);
    expect(code).toBe(3);
    expect(record.status).toBe('waiting');
    w.kill('SIGKILL');
    await startWorker();
    const signalled = await cli('signal', record.runId, 'ok', '--payload', 'yes', '--json');
    expect(signalled.code).toBe(0);
    expect(JSON.parse(signalled.stdout)).toMatchObject({
      status: 'completed',
      outputs: { text: 'answer: yes' },
    });
  });

  it('fires a wait timeout after every process restarted', async () => {
    const w = await startWorker();
    const file = directive(
      'timer',
      `<process><step name="ask" on_error="late"><wait signal="go" timeout_seconds="2"/></step><step name="late"><render>timed out</render></step></process><outputs><output name="text" value="\${steps.late.result}"/></outputs>`,
    );
    const { record } = await runJson(file);
    expect(record.status).toBe('waiting');
    const killed = new Promise((r) => w.once('exit', r));
    w.kill('SIGKILL');
    await killed;
    await startWorker();
    await until(async () => {
      const s = await cli('status', record.runId, '--json');
      return (JSON.parse(s.stdout) as { status: string }).status !== 'waiting';
    }, 10_000);
    const s = await cli('status', record.runId, '--json');
    expect(JSON.parse(s.stdout)).toMatchObject({
      status: 'completed',
      outputs: { text: 'timed out' },
    });
  });

  it('lets a run go while its step waits to retry, and makes the next attempt after every process restarted', async () => {
    const w = await startWorker();
    const marker = join(project, 'tried');
    const file = directive(
      'flaky',
      `<process><step name="try"><retry attempts="2" backoff="fixed" delay_ms="3000"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="if [ -e ${marker} ]; then echo second; else touch ${marker}; exit 1; fi"/></execute></step></process><outputs><output name="out" value="\${steps.try.result.stdout}"/></outputs>`,
    );
    const started = await cli('run', file, '--detach');
    expect(started.code).toBe(0);
    const runId = started.stdout.trim();
    const store = new RedisRunStore(redis.redis, { prefix: redis.prefix });
    const runs = new Queue(QueueName.RUNS, { connection: redis.redis, prefix: redis.prefix });
    try {
      // Attempt 1 failed: the stored step says when attempt 2 is due, and the run's job waits
      // in the delayed set for it, holding no worker slot.
      await until(async () => (await store.load(runId))?.steps.try?.retryAt !== undefined);
      const retryAt = (await store.load(runId))!.steps.try!.retryAt!;
      await until(async () => (await runs.getJobState(runId)) === 'delayed');
      const killed = new Promise((r) => w.once('exit', r));
      w.kill('SIGKILL');
      await killed;
      await startWorker();
      await until(async () => (await store.load(runId))?.record.status === 'completed', 15_000);
      const done = (await store.load(runId))!;
      expect(done.record.outputs).toEqual({ out: 'second\n' });
      expect(done.record.steps).toMatchObject([{ name: 'try', status: 'completed', attempts: 2 }]);
      expect(done.record.endedAt!).toBeGreaterThanOrEqual(retryAt);
    } finally {
      await runs.close();
    }
  });

  it('parks a run while its tool job runs long, holding no slot, and wakes it when the tool ends', async () => {
    // Workers on one queue each: the call is a job (a worker on both would run it in process).
    await Promise.all([startWorker('runs'), startWorker('tools')]);
    const file = directive(
      'slow',
      `<process>${bash('nap', 'sleep 4; echo rested')}<step name="after"><render>done: \${steps.nap.result.stdout}</render></step></process><outputs><output name="text" value="\${steps.after.result}"/></outputs>`,
    );
    const runs = new Queue(QueueName.RUNS, { connection: redis.redis, prefix: redis.prefix });
    try {
      const done = runJson(file);
      // After 2 s with nothing to do but wait for its tool, the run's job waits in the delayed
      // set (until a check-in minutes away) while the tool job runs.
      await until(async () => (await runs.getJobCounts('delayed', 'active')).delayed === 1);
      expect((await runs.getJobCounts('active')).active).toBe(0);
      const { code, record } = await done;
      expect(code).toBe(0);
      expect(record.outputs).toEqual({ text: 'done: rested\n' });
      // Woken by its tool's end, not by the check-in.
      const took = record as unknown as { endedAt: number; startedAt: number };
      expect(took.endedAt - took.startedAt).toBeLessThan(8000);
    } finally {
      await runs.close();
    }
  });

  it('wakes a parked run whose worker died, once its tool ends on another worker', async () => {
    const [driver] = await Promise.all([startWorker('runs'), startWorker('tools')]);
    const file = directive(
      'orphan',
      `<process>${bash('nap', 'sleep 4; echo rested')}</process><outputs><output name="out" value="\${steps.nap.result.stdout}"/></outputs>`,
    );
    const runs = new Queue(QueueName.RUNS, { connection: redis.redis, prefix: redis.prefix });
    const store = new RedisRunStore(redis.redis, { prefix: redis.prefix });
    try {
      const started = await cli('run', file, '--detach', '--json');
      const { runId } = JSON.parse(started.stdout) as { runId: string };
      await until(async () => (await runs.getJobState(runId)) === 'delayed');
      driver.kill('SIGKILL');
      await startWorker('runs');
      // No one hears the tool's outcome any more: the tool's worker wakes the run itself, long
      // before the parked run's check-in.
      await until(async () => (await store.load(runId))?.record.status === 'completed', 10_000);
      expect((await store.load(runId))!.record.outputs).toEqual({ out: 'rested\n' });
    } finally {
      await runs.close();
    }
  });

  it("reaches a parked run with its step's timeout, which stops the tool wherever it runs", async () => {
    await Promise.all([startWorker('runs'), startWorker('tools')]);
    const file = directive(
      'late',
      `<process><step name="hang"><retry attempts="1"/><timeout seconds="6"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="sleep 60 &amp; echo $! &gt; child.pid; wait"/></execute></step></process>`,
    );
    const runs = new Queue(QueueName.RUNS, { connection: redis.redis, prefix: redis.prefix });
    try {
      const done = runJson(file);
      await until(async () => (await runs.getJobCounts('delayed')).delayed === 1);
      const pid = Number(readFileSync(join(project, 'child.pid'), 'utf8'));
      const { code, record } = await done;
      expect(code).toBe(1);
      expect(record).toMatchObject({ status: 'failed', error: { code: 'STEP_TIMEOUT' } });
      expect((record.error as unknown as { message: string }).message).toMatch(
        /^Step "hang" ran (longer than its timeout of 6s|past the deadline of its <timeout>).*raise <timeout seconds="…">/,
      );
      await until(() => !alive(pid), 5000);
    } finally {
      await runs.close();
    }
  });

  it("stops a tool at its step's deadline on the tool's own worker, with no run worker left", async () => {
    const [driver] = await Promise.all([startWorker('runs'), startWorker('tools')]);
    const file = directive(
      'deadline',
      `<process><step name="hang"><retry attempts="1"/><timeout seconds="3"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="sleep 60 &amp; echo $! &gt; child.pid; wait"/></execute></step></process>`,
    );
    const started = await cli('run', file, '--detach');
    expect(started.code).toBe(0);
    await until(() => existsSync(join(project, 'child.pid')));
    const pid = Number(readFileSync(join(project, 'child.pid'), 'utf8'));
    driver.kill('SIGKILL');
    const killedAt = Date.now();
    await until(() => !alive(pid), 6000);
    // Within the step's 3 s, not whenever a run worker comes back.
    expect(Date.now() - killedAt).toBeLessThan(4000);
  });

  it('cancels a parked run and stops its tool on another worker', async () => {
    await Promise.all([startWorker('runs'), startWorker('tools')]);
    const file = directive(
      'parked',
      `<process>${bash('hang', 'sleep 60 & echo $! > child.pid; wait')}</process>`,
    );
    const runs = new Queue(QueueName.RUNS, { connection: redis.redis, prefix: redis.prefix });
    try {
      const started = await cli('run', file, '--detach', '--json');
      const { runId } = JSON.parse(started.stdout) as { runId: string };
      await until(async () => (await runs.getJobState(runId)) === 'delayed');
      const pid = Number(readFileSync(join(project, 'child.pid'), 'utf8'));
      const cancelled = await cli('cancel', runId, '--json');
      expect(cancelled.code).toBe(1);
      expect(JSON.parse(cancelled.stdout)).toMatchObject({ status: 'cancelled' });
      await until(() => !alive(pid), 5000);
    } finally {
      await runs.close();
    }
  });

  it('cancels a run that no worker holds while its step waits to retry', async () => {
    await startWorker();
    const file = directive(
      'failing',
      `<process><step name="try"><retry attempts="3" backoff="fixed" delay_ms="60000"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="exit 1"/></execute></step></process>`,
    );
    const started = await cli('run', file, '--detach');
    const runId = started.stdout.trim();
    const store = new RedisRunStore(redis.redis, { prefix: redis.prefix });
    await until(async () => (await store.load(runId))?.steps.try?.retryAt !== undefined);
    const cancelled = await cli('cancel', runId, '--json');
    expect(cancelled.code).toBe(1);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({
      status: 'cancelled',
      steps: [{ name: 'try', status: 'cancelled', attempts: 1 }],
    });
  });

  it('never lets more than 2 calls hold a lock with limit 2, while other jobs keep flowing', async () => {
    await Promise.all([startWorker(), startWorker()]);
    mkdirSync(join(project, '.ai', 'tools', 'locked'), { recursive: true });
    writeFileSync(
      join(project, '.ai', 'tools', 'locked', 'work.yaml'),
      [
        'tool_type: yaml',
        'executor_id: rye/core/runtimes/bash_runtime',
        'description: holds the repo lock for a while',
        'concurrency: { key: "repo:${inputs.repo}", limit: 2, lease_ms: 5000 }',
        'config:',
        '  command: s=$(date +%s%3N); sleep 0.3; echo "$s $(date +%s%3N)" >> "$2/times.log"',
        'config_schema: { type: object, properties: { repo: { type: string } }, required: [repo] }',
      ].join('\n'),
    );
    const locked = directive(
      'locked',
      `<process><step name="each"><foreach over="\${inputs.items}" as="n" parallel="8"><execute item_type="tool" item_id="locked/work"><param name="repo" value="a"/></execute></foreach></step></process><inputs><input name="items" type="array"/></inputs>`,
    );
    const quick = directive('quick', `<process>${bash('one', 'echo quick')}</process>`);
    const lockedRun = runJson(
      locked,
      '--inputs',
      JSON.stringify({ items: [1, 2, 3, 4, 5, 6, 7, 8] }),
    );
    await until(() => existsSync(join(project, 'times.log')));
    const quickRun = await runJson(quick);
    expect(quickRun.record.status).toBe('completed');
    const lockedDone = await lockedRun;
    expect(lockedDone.record.status).toBe('completed');
    const intervals = readFileSync(join(project, 'times.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' ').map(Number) as [number, number]);
    expect(intervals).toHaveLength(8);
    expect(quickRun.record.steps).toHaveLength(1);
    const points = intervals
      .flatMap(
        ([a, b]) =>
          [
            [a, 1],
            [b, -1],
          ] as const,
      )
      .sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    let holders = 0;
    let most = 0;
    for (const [, d] of points) most = Math.max(most, (holders += d));
    expect(most).toBeLessThanOrEqual(2);
    expect(most).toBe(2);
  });

  it('drains on SIGTERM: the tool under way finishes, the run is handed to another worker', async () => {
    const w = await startWorker();
    const steps = ['a', 'b', 'c', 'd']
      .map((s) => bash(s, `echo ${s} >> steps.log; sleep 0.7`))
      .join('');
    const file = directive('drain', `<process>${steps}</process>`);
    const pending = runJson(file);
    await until(() => existsSync(join(project, 'steps.log')));
    const exited = new Promise<number | null>((r) => w.once('exit', (code) => r(code)));
    const termAt = Date.now();
    w.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - termAt, 'it did not wait for the whole run').toBeLessThan(2000);
    await startWorker();
    const { record } = await pending;
    expect(record).toMatchObject({ status: 'completed' });
    expect(readFileSync(join(project, 'steps.log'), 'utf8')).toBe('a\nb\nc\nd\n');
  });

  it("serialises a step's tool calls under its <lock> with limit 1, keyed by the run's inputs", async () => {
    await Promise.all([startWorker(), startWorker()]);
    const file = directive(
      'serial',
      `<inputs><input name="repo" type="string"/><input name="items" type="array"/></inputs><process><step name="each"><lock key="repo:\${inputs.repo}" limit="1" lease_seconds="5"/><foreach over="\${inputs.items}" as="n" parallel="4"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value='s=$(date +%s%3N); sleep 0.2; echo "$s $(date +%s%3N)" >> times.log'/></execute></foreach></step></process>`,
    );
    const { record } = await runJson(
      file,
      '--inputs',
      JSON.stringify({ repo: 'x', items: [1, 2, 3, 4] }),
    );
    expect(record.status).toBe('completed');
    const intervals = readFileSync(join(project, 'times.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' ').map(Number) as [number, number])
      .sort((a, b) => a[0] - b[0]);
    expect(intervals).toHaveLength(4);
    for (let i = 1; i < intervals.length; i++)
      expect(intervals[i]![0]).toBeGreaterThanOrEqual(intervals[i - 1]![1]);
  });

  it('says clearly when Redis does not answer, and exits 1 without running anything', async () => {
    const file = directive('nowhere', `<process>${bash('x', 'touch ran')}</process>`);
    const r = await processes.cli(
      process.env,
      'run',
      file,
      '--redis',
      'redis://127.0.0.1:1',
      '--project',
      project,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Redis at redis://127.0.0.1:1 does not answer');
    expect(r.stderr).toContain('REDIS_UNAVAILABLE');
    expect(existsSync(join(project, 'ran'))).toBe(false);
  });
});
