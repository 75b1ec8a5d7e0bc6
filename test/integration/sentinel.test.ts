/**
 * A deployment named by its sentinels (`redis+sentinel://…/<master name>`): a primary, a replica
 * and three sentinels of the test's own (`bench/local-redis/sentinel-group.ts`), on free loopback
 * ports, never the machine's Redis. A client and a worker find the primary through the
 * sentinels, and a run goes from start to end on them.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Dirigent } from '../../src/operations/dirigent.js';
import { connectRedis, pingRedis } from '../../src/redis/redis-connection.js';
import { RunWorker } from '../../src/redis/run-worker/run-worker.js';
import { ToolWorker } from '../../src/redis/tool-worker/tool-worker.js';
import { writeDirective } from '../support/directive-file.js';
import { SentinelGroup } from '../../bench/local-redis/sentinel-group.js';

let group: SentinelGroup;
let dir: string;
let sentinelUrl: string;

beforeAll(async () => {
  group = await SentinelGroup.start();
  sentinelUrl = group.url;
  dir = mkdtempSync(join(tmpdir(), 'dirigent-sentinel-'));
}, 60_000);

afterAll(async () => {
  await group?.stop();
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
