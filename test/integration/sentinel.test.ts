/**
 * A deployment named by its sentinels (`redis+sentinel://…/<master name>`): a primary and a
 * sentinel of the test's own, on free loopback ports, never the machine's Redis. A client and a
 * worker find the primary through the sentinel, and a run goes from start to end on them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { Dirigent } from '../../src/operations/dirigent.js';
import { connectRedis, pingRedis } from '../../src/redis/redis-connection.js';
import { RunWorker } from '../../src/redis/run-worker/run-worker.js';
import { ToolWorker } from '../../src/redis/tool-worker/tool-worker.js';
import { writeDirective } from '../support/directive-file.js';
import { freePort } from '../support/dirigent-processes.js';
import { waitFor } from '../support/wait-for.js';

const children: ChildProcess[] = [];
let dir: string;
let sentinelUrl: string;

function start(args: string[]): void {
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  children.push(child);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dirigent-sentinel-'));
  const primary = await freePort();
  const sentinel = await freePort();
  start(['--port', String(primary), '--bind', '127.0.0.1', '--save', '', '--dir', dir]);
  const conf = join(dir, 'sentinel.conf');
  writeFileSync(
    conf,
    `port ${sentinel}\nbind 127.0.0.1\ndir ${dir}\nsentinel monitor dirigent 127.0.0.1 ${primary} 1\n`,
  );
  start([conf, '--sentinel']);
  const probe = new Redis(sentinel, '127.0.0.1', { lazyConnect: true, retryStrategy: () => 50 });
  probe.on('error', () => undefined);
  try {
    await waitFor(
      async () => {
        if (probe.status !== 'ready') await probe.connect().catch(() => undefined);
        const addr = (await probe.call('SENTINEL', 'get-master-addr-by-name', 'dirigent')) as
          | string[]
          | null;
        return addr?.[1] === String(primary);
      },
      { what: 'the sentinel to watch the primary', timeoutMs: 15_000, intervalMs: 100 },
    );
  } finally {
    probe.disconnect();
  }
  sentinelUrl = `redis+sentinel://127.0.0.1:${sentinel}/dirigent`;
}, 30_000);

afterAll(async () => {
  for (const c of children) {
    if (c.exitCode !== null) continue;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('a deployment named by its sentinels', { timeout: 30_000 }, () => {
  it('is answered, and runs a directive from start to end through a worker', async () => {
    expect(await pingRedis(sentinelUrl, 2000)).toBe(true);
    const project = join(dir, 'project');
    mkdirSync(join(project, '.ai', 'directives'), { recursive: true });
    writeDirective(
      join(project, '.ai', 'directives'),
      'hello',
      `<inputs><input name="who" type="string" required="true"/></inputs>
      <process><step name="greet"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo hello {input:who}"/></execute></step></process>
      <outputs><output name="said" value="\${steps.greet.result.stdout}"/></outputs>`,
    );
    const connection = connectRedis(sentinelUrl);
    const prefix = 'sentinel-test';
    const tools = new ToolWorker({ redis: connection, prefix, projectDir: project });
    const runs = new RunWorker({ redis: connection, prefix, projectDir: project, tools });
    const dirigent = await Dirigent.open({ project, redis: sentinelUrl, prefix });
    try {
      const record = await dirigent.run({ directive: 'hello', inputs: { who: 'Ada' } });
      expect(record.status).toBe('completed');
      expect(record.outputs).toEqual({ said: 'hello Ada\n' });
    } finally {
      await dirigent.close();
      await Promise.all([runs.close(), tools.close()]);
      connection.disconnect();
    }
  });

  it('refuses a malformed URL with INVALID_CONFIG before connecting', async () => {
    await expect(
      Dirigent.open({ project: dir, redis: 'redis+sentinel://127.0.0.1:1' }),
    ).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    await expect(
      Dirigent.open({ project: dir, redis: 'redis+cluster://127.0.0.1:7000/0' }),
    ).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
  });
});
