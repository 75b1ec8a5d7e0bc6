/**
 * Operating runs through real `dirigent` processes on the real Redis, where a process dies: a
 * redrive whose worker is killed (SIGKILL) is taken over and goes on; a bulk cancel of 1,000 runs
 * whose CLI is killed mid-way, given again, acts on each run once; a pause outlives every process
 * of the deployment, and the runs it held go on when it is resumed by new ones.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Dirigent } from '../../src/operations/dirigent.js';
import { QueueName } from '../../src/redis/queue-names.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentProcesses, until } from '../support/dirigent-processes.js';
import { defaultWorkerEnv } from '../support/in-process-worker.js';
import { CLI_MAIN } from '../support/paths.js';
import { redisForTest } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';

const redis = redisForTest();
const processes = dirigentProcesses();
let project: string;
const opened: Dirigent[] = [];

beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-operate-'));
  mkdirSync(join(project, '.ai', 'directives'), { recursive: true });
});
afterEach(async () => {
  for (const d of opened.splice(0)) await d.close();
  rmSync(project, { recursive: true, force: true });
});

const env = () => defaultWorkerEnv(redis);
const directives = () => join(project, '.ai', 'directives');
const lines = (file: string) =>
  existsSync(join(project, file))
    ? readFileSync(join(project, file), 'utf8').trim().split('\n')
    : [];
const bash = (name: string, command: string, attempts = 1) =>
  `<step name="${name}"><retry attempts="${attempts}" backoff="fixed" delay_ms="10"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="${command}"/></execute></step>`;

async function worker(): Promise<{ child: ChildProcess; log: () => string }> {
  const child = await processes.worker(env(), '--queues', 'runs,tools', '--project', project);
  let log = '';
  child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  return { child, log: () => log };
}

async function client(): Promise<Dirigent> {
  const d = await Dirigent.open({ project, redis: redis.url, prefix: redis.prefix });
  opened.push(d);
  return d;
}

describe('operating runs through processes that die', { timeout: 120_000 }, () => {
  it('takes over a redrive whose worker was killed with SIGKILL: the run goes on to its end', async () => {
    writeDirective(
      directives(),
      'flaky',
      `<process>
      ${bash('one', 'echo one >> effects')}
      ${bash('gate', 'echo gate >> effects; test -f open')}
      ${bash('slow', 'echo slow >> effects; [ $(grep -c slow effects) -gt 1 ] || sleep 30; echo done >> effects', 2)}
    </process>`,
    );
    const a = await worker();
    const dirigent = await client();
    const failed = await dirigent.run({ directive: 'flaky' });
    expect(failed.status).toBe('failed');
    writeFileSync(join(project, 'open'), '');
    const redriven = dirigent.redrive(failed.runId, { by: 'test' });
    await until(() => lines('effects').includes('slow'), 20_000, 'the redriven run to reach slow');
    const b = await worker();
    a.child.kill('SIGKILL');
    const record = await redriven;
    expect(record.status).toBe('completed');
    expect(record.redrives?.map((r) => r.by)).toEqual(['test']);
    // The first step ran once; the gate once failing and once after the redrive; the slow step
    // again after the takeover (the attempt lost with the worker counts as one).
    expect(lines('effects').filter((l) => l === 'one')).toHaveLength(1);
    expect(lines('effects').filter((l) => l === 'gate')).toHaveLength(2);
    expect(lines('effects').filter((l) => l === 'done')).toHaveLength(1);
    expect(b.log()).toContain(`took over run ${failed.runId}`);
  });

  it('acts on each of 1,000 runs once when a bulk cancel killed mid-way is given again', async () => {
    writeDirective(
      directives(),
      'held',
      `<process><step name="hold"><wait signal="go"/></step></process>`,
    );
    await worker();
    const dirigent = await client();
    const runs = await Promise.all(
      Array.from({ length: 1000 }, () => dirigent.start({ directive: 'held' })),
    );
    await waitFor(
      async () => (await dirigent.runs.counts({ directive: 'held' })).byStatus.waiting === 1000,
      { what: '1,000 runs waiting', timeoutMs: 60_000, intervalMs: 250 },
    );
    const args = ['cancel', '--all', '--directive', 'held', '--json', '--project', project];
    const cli = spawn(process.execPath, [CLI_MAIN, ...args], {
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Killed once it has acted on some of them.
    await waitFor(
      async () => (await dirigent.runs.counts({ directive: 'held' })).byStatus.cancelled >= 100,
      { what: 'the first runs cancelled', timeoutMs: 60_000, intervalMs: 50 },
    );
    cli.kill('SIGKILL');
    await new Promise((r) => cli.once('exit', r));
    const mid = (await dirigent.runs.counts({ directive: 'held' })).byStatus.cancelled;
    expect(mid).toBeLessThan(1000);
    const again = await processes.cli(env(), ...args);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ matched: 1000, acted: 1000, skipped: 0, failed: 0 });
    for (const run of runs.slice(0, 50)) {
      const record = await run.status();
      expect(record.status).toBe('cancelled');
      // Cancelled once: one step entry, the cancelled wait.
      expect(record.steps.map((s) => s.status)).toEqual(['cancelled']);
    }
    expect((await dirigent.runs.counts({ directive: 'held' })).byStatus.cancelled).toBe(1000);
  });

  it('keeps a pause across a restart of every process, and resumes the held runs with new ones', async () => {
    writeDirective(
      directives(),
      'steps',
      `<inputs><input name="n" type="integer" required="true"/></inputs>
      <process>${bash('first', 'echo first {input:n} >> effects')}${bash('second', 'echo second {input:n} >> effects')}</process>`,
    );
    const first = await worker();
    const paused = await processes.cli(env(), 'pause', 'steps', '--project', project);
    expect(paused.code, paused.stderr).toBe(0);
    const dirigent = await client();
    const ids: string[] = [];
    for (let n = 0; n < 3; n++)
      ids.push((await dirigent.start({ directive: 'steps', inputs: { n } })).runId);
    for (const id of ids)
      await waitFor(async () => (await dirigent.get(id)).status === 'paused', {
        what: `run ${id} paused`,
      });
    // Every process goes: the worker, and the client.
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    await opened.pop()!.close();
    const status = await processes.cli(
      env(),
      'runs',
      '--status',
      'paused',
      '--json',
      '--project',
      project,
    );
    expect((JSON.parse(status.stdout) as { runId: string }[]).map((r) => r.runId).sort()).toEqual(
      [...ids].sort(),
    );
    expect(lines('effects')).toEqual([]);
    const resumed = await processes.cli(env(), 'resume', 'steps', '--json', '--project', project);
    expect(JSON.parse(resumed.stdout)).toEqual({
      paused: { all: false, directives: [] },
      resumed: 3,
    });
    // No worker yet: the runs wait to go on, in the order they started.
    const queue = new Queue(QueueName.RUNS, { connection: redis.connect(), prefix: redis.prefix });
    try {
      const waiting = await queue.getJobs(['wait'], 0, -1, true);
      expect(waiting.map((j) => (j.data as { runId: string }).runId)).toEqual(ids);
    } finally {
      await queue.close();
    }
    await worker();
    const again = await client();
    for (const id of ids)
      await waitFor(async () => (await again.get(id)).status === 'completed', {
        what: `run ${id} resumed to its end`,
      });
    expect(lines('effects').sort()).toEqual([
      'first 0',
      'first 1',
      'first 2',
      'second 0',
      'second 1',
      'second 2',
    ]);
  });
});
