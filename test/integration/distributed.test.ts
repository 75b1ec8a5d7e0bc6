/**
 * Distributed runs with real worker processes (`dirigent worker`) on the real Redis: work is
 * shared between workers, a worker killed with SIGKILL loses nothing, the process driving a run
 * can die between or during steps, cancellation reaches a tool on another worker, waiting runs
 * and their timers survive a restart of every process, a draining worker hands its run on, and
 * concurrency locks hold across workers. Parked runs: distributed-parked.test.ts.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { QueueName } from '../../src/redis/queue-names.js';
import { RedisRunStore } from '../../src/redis/run-store/redis-run-store.js';
import { alive } from '../support/process-alive.js';
import { until } from '../support/dirigent-processes.js';
import { bashStep, workerCluster } from '../support/worker-cluster.js';

const c = workerCluster();
const { redis, processes, startWorker, cli, runJson, directive } = c;
const bash = bashStep;

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
    await until(() => existsSync(join(c.project, 'steps.log')));
    first.kill('SIGKILL');
    await startWorker();
    const { record } = await pending;
    expect(record.status).toBe('completed');
    expect(
      readFileSync(join(c.project, 'steps.log'), 'utf8').trim().split('\n').length,
    ).toBeGreaterThanOrEqual(1);
  });

  it('resumes a run whose driving process dies between steps, without running ended steps again', async () => {
    const [, driver] = await Promise.all([startWorker('tools'), startWorker('runs')]);
    const steps = ['a', 'b', 'c'].map((s) => bash(s, `echo ${s} >> steps.log; sleep 0.4`)).join('');
    const file = directive('three', `<process>${steps}</process>`);
    const pending = runJson(file);
    await until(
      () =>
        existsSync(join(c.project, 'steps.log')) &&
        readFileSync(join(c.project, 'steps.log'), 'utf8').includes('b'),
    );
    driver.kill('SIGKILL');
    await startWorker('runs');
    const { record } = await pending;
    expect(record.status).toBe('completed');
    expect(record.steps.map((s) => s.name)).toEqual(['a', 'b', 'c']);
    expect(readFileSync(join(c.project, 'steps.log'), 'utf8')).toBe('a\nb\nc\n');
  });

  it('cancels a run and kills its tool on another worker', async () => {
    await Promise.all([startWorker('runs'), startWorker('tools')]);
    const file = directive(
      'hang',
      `<process>${bash('hang', 'sleep 60 & echo $! > child.pid; wait')}</process>`,
    );
    const started = await cli('run', file, '--detach', '--json');
    const { runId } = JSON.parse(started.stdout) as { runId: string };
    await until(() => existsSync(join(c.project, 'child.pid')));
    const pid = Number(readFileSync(join(c.project, 'child.pid'), 'utf8'));
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
    const marker = join(c.project, 'tried');
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

  it('never lets more than 2 calls hold a lock with limit 2, while other jobs keep flowing', async () => {
    await Promise.all([startWorker(), startWorker()]);
    mkdirSync(join(c.project, '.ai', 'tools', 'locked'), { recursive: true });
    writeFileSync(
      join(c.project, '.ai', 'tools', 'locked', 'work.yaml'),
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
    await until(() => existsSync(join(c.project, 'times.log')));
    const quickRun = await runJson(quick);
    expect(quickRun.record.status).toBe('completed');
    const lockedDone = await lockedRun;
    expect(lockedDone.record.status).toBe('completed');
    const intervals = readFileSync(join(c.project, 'times.log'), 'utf8')
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
    await until(() => existsSync(join(c.project, 'steps.log')));
    const exited = new Promise<number | null>((r) => w.once('exit', (code) => r(code)));
    const termAt = Date.now();
    w.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - termAt, 'it did not wait for the whole run').toBeLessThan(2000);
    await startWorker();
    const { record } = await pending;
    expect(record).toMatchObject({ status: 'completed' });
    expect(readFileSync(join(c.project, 'steps.log'), 'utf8')).toBe('a\nb\nc\nd\n');
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
    const intervals = readFileSync(join(c.project, 'times.log'), 'utf8')
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
      c.project,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Redis at redis://127.0.0.1:1 does not answer');
    expect(r.stderr).toContain('REDIS_UNAVAILABLE');
    expect(existsSync(join(c.project, 'ran'))).toBe(false);
  });
});
