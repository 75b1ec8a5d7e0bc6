/**
 * Parked runs with real worker processes on the real Redis: a run whose steps only wait for tool
 * jobs or a retry is let go, holding no worker slot, and is woken when a tool ends (even when its
 * worker died meanwhile), when a step's timeout comes (which stops the tool wherever it runs), or
 * when it is cancelled; a tool's deadline holds on its own worker with no run worker left.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { QueueName } from '../../src/redis/queue-names.js';
import { RedisRunStore } from '../../src/redis/run-store/redis-run-store.js';
import { alive } from '../support/process-alive.js';
import { until } from '../support/dirigent-processes.js';
import { bashStep, workerCluster } from '../support/worker-cluster.js';

const c = workerCluster();
const { redis, startWorker, cli, runJson, directive } = c;
const bash = bashStep;

describe('parked runs', { timeout: 60_000 }, () => {
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
      const pid = Number(readFileSync(join(c.project, 'child.pid'), 'utf8'));
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
    await until(() => existsSync(join(c.project, 'child.pid')));
    const pid = Number(readFileSync(join(c.project, 'child.pid'), 'utf8'));
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
      const pid = Number(readFileSync(join(c.project, 'child.pid'), 'utf8'));
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
});
