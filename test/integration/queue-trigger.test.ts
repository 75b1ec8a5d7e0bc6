/**
 * The queue trigger: a plain BullMQ client in a process of its own (a script that imports only
 * `bullmq`) starts runs by adding jobs to `dirigent-triggers`; a job's return value is the run's id
 * or its record; a job for a directive that does not exist or with invalid inputs fails at once,
 * unretried, with the error's code; one idempotency key starts one run.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeDirective } from '../support/directive-file.js';
import { dirigentProcesses } from '../support/dirigent-processes.js';
import { REPO_ROOT } from '../support/paths.js';
import { redisForTest } from '../support/redis.js';
import { parseRedisUrl } from '../../src/redis/redis-endpoint.js';

const redis = redisForTest();
const processes = dirigentProcesses();
let project: string;

beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-trigger-'));
  const dir = join(project, '.ai', 'directives');
  mkdirSync(dir, { recursive: true });
  writeDirective(
    dir,
    'hello',
    `<inputs><input name="name" type="string"/></inputs>
    <process><step name="greet"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo {input:name} >> ran.log; echo 'Hello, {input:name}!'"/></execute></step></process>
    <outputs><output name="greeting" expr="$trim(steps.greet.result.stdout)"/></outputs>`,
  );
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

/** Adds jobs from a process of its own that knows only `bullmq`; prints what each job ended with. */
async function client(jobs: { name: string; data: unknown }[]): Promise<unknown[]> {
  const script = `
    import { Queue, QueueEvents } from 'bullmq';
    import { Cluster } from 'ioredis';
    // One Redis by its URL; a Redis Cluster by its nodes, as BullMQ takes one.
    const nodes = ${JSON.stringify(clusterNodes(redis.url))};
    const connection = nodes
      ? new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: null } })
      : { url: ${JSON.stringify(redis.url)} };
    const prefix = ${JSON.stringify(redis.prefix)};
    const queue = new Queue('dirigent-triggers', { connection, prefix });
    // From the stream's start: ready, a QueueEvents may not have sent its first read yet, and
    // read from '$' it would miss a job that finishes in between (its wait would then time out).
    const events = new QueueEvents('dirigent-triggers', { connection, prefix, lastEventId: '0-0' });
    await events.waitUntilReady();
    const out = await Promise.all(${JSON.stringify(jobs)}.map(async ({ name, data }) => {
      const job = await queue.add(name, data);
      try {
        return { value: await job.waitUntilFinished(events, 30000) };
      } catch (err) {
        const failed = await queue.getJob(job.id);
        return { failed: String(err.message), attempts: failed?.attemptsMade };
      }
    }));
    console.log(JSON.stringify(out));
    await Promise.all([queue.close(), events.close()]);
    if (nodes) connection.disconnect();
  `;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', script],
    { cwd: REPO_ROOT },
  );
  return JSON.parse(stdout) as unknown[];
}

/** The nodes of a Redis Cluster URL, or null for one Redis. */
function clusterNodes(url: string): { host: string; port: number }[] | null {
  const endpoint = parseRedisUrl(url);
  return endpoint.kind === 'cluster' ? endpoint.nodes : null;
}

const env = () => ({ ...process.env, REDIS_URL: redis.url, DIRIGENT_PREFIX: redis.prefix });

describe('the dirigent-triggers queue', { timeout: 60_000 }, () => {
  it('starts runs for any BullMQ client: the run id, or the record when asked to wait', async () => {
    await processes.worker(env(), '--project', project);
    const [byId, waited] = (await client([
      { name: 'run', data: { directive: 'hello', inputs: { name: 'Ada' } } },
      { name: 'run', data: { directive: 'hello', inputs: { name: 'Bob' }, wait: 20 } },
    ])) as [{ value: string }, { value: { status: string; outputs: unknown; runId: string } }];
    // Whole results, so that a job that failed shows why.
    expect(byId).toEqual({ value: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown });
    expect(waited).toMatchObject({
      value: { status: 'completed', outputs: { greeting: 'Hello, Bob!' } },
    });
    const record = await processes.cli(env(), 'status', byId.value, '--json', '--project', project);
    expect(JSON.parse(record.stdout)).toMatchObject({ runId: byId.value, directive: 'hello' });
  });

  it('fails jobs that cannot start a run at once, unretried, with the error and its code', async () => {
    await processes.worker(env(), '--project', project);
    const [unknown, invalid, malformed] = (await client([
      { name: 'run', data: { directive: 'nope', inputs: {} } },
      { name: 'run', data: { directive: 'hello', inputs: { name: 42, extra: true } } },
      { name: 'run', data: { directive: 'hello', inputs: [] } },
    ])) as { failed: string; attempts: number }[];
    expect(unknown!.failed).toContain('"code":"UNKNOWN_DIRECTIVE"');
    expect(invalid!.failed).toContain('"code":"INVALID_INPUTS"');
    expect(invalid!.failed).toContain('extra');
    expect(malformed!.failed).toContain('"code":"INVALID_REQUEST"');
    for (const f of [unknown!, invalid!, malformed!]) expect(f.attempts).toBe(1);
  });

  it('starts one run for one idempotency key, however many jobs carry it', async () => {
    await processes.worker(env(), '--project', project);
    const data = {
      directive: 'hello',
      inputs: { name: 'Once' },
      idempotencyKey: 'order-1',
      wait: 20,
    };
    const results = (await client(Array.from({ length: 5 }, () => ({ name: 'run', data })))) as {
      value: { runId: string; status: string };
    }[];
    expect(new Set(results.map((r) => r.value.runId)).size).toBe(1);
    expect(results.every((r) => r.value.status === 'completed')).toBe(true);
    expect(readFileSync(join(project, 'ran.log'), 'utf8')).toBe('Once\n');
  });
});
