/**
 * Ended runs are kept for a retention, then removed with everything of them: the project's
 * (`retention` in `.ai/config/dirigent.yaml`), a directive's `<retention days>` (which wins), else
 * 7 days. On Redis (workers in this process, every call a tool job): the run's hash and feed
 * expire, and its index entries, its directive's text and its finished jobs go within about a
 * second of it. Embedded: its file leaves `.dirigent/runs/`. Waiting runs are kept whatever the
 * retention. Retentions of a second or two; conditions waited for with a deadline.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RedisClient } from '../../src/redis/redis-client.js';
import { afterEach, describe, expect, it } from 'vitest';
import { forgetRetentions } from '../../src/engine/run-retention.js';
import { Dirigent } from '../../src/operations/dirigent.js';
import { RedisRunStore } from '../../src/redis/run-store/redis-run-store.js';
import { writeDirective } from '../support/directive-file.js';
import { inProcessWorker } from '../support/in-process-worker.js';
import { redisForTest } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';

const redis = redisForTest();

/** A tagged run that calls a tool twice (two tool jobs on Redis), then ends. */
const ECHO = (metadata = '') => `<metadata><description>echo</description>
    <tag name="customer" value="\${inputs.customer}"/>${metadata}</metadata>
  <inputs><input name="customer" type="string" required="true"/></inputs>
  <process>
    <step name="one"><execute item_type="tool" item_id="dirigent/util/echo"><param name="said" value="one \${inputs.customer}"/></execute></step>
    <step name="two"><execute item_type="tool" item_id="dirigent/util/echo"><param name="said" value="two"/></execute></step>
  </process>
  <outputs><output name="said" expr="steps.one.result.said"/></outputs>`;

/** A run that waits for an answer. */
const ASK = `<metadata><description>ask</description></metadata>
  <process><step name="ask"><instruction>Go on?</instruction></step></process>`;

let cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
  forgetRetentions();
});

/** A project with `retention` set as given (none: not set) and these directives. */
function project(retention: string | undefined, directives: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-retention-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const folder = join(dir, '.ai', 'directives');
  mkdirSync(folder, { recursive: true });
  for (const [name, xml] of Object.entries(directives)) writeDirective(folder, name, xml);
  if (retention !== undefined) {
    mkdirSync(join(dir, '.ai', 'config'), { recursive: true });
    writeFileSync(join(dir, '.ai', 'config', 'dirigent.yaml'), `retention: ${retention}\n`);
  }
  return dir;
}

/** Opens the project embedded, or on the test's Redis with workers that run every call as a job. */
async function open(mode: 'embedded' | 'redis', dir: string): Promise<Dirigent> {
  if (mode === 'redis') {
    const w = inProcessWorker(redis, { projectDir: dir, eager: false });
    cleanups.push(() => w.close());
  }
  const dirigent = await Dirigent.open({
    project: dir,
    ...(mode === 'redis' && { redis: redis.url, prefix: redis.prefix }),
  });
  cleanups.push(() => dirigent.close());
  return dirigent;
}

async function ended(dirigent: Dirigent, directive: string, customer = 'c1'): Promise<string> {
  const run = await dirigent.start({ directive, inputs: { customer } });
  expect((await run.wait()).status).toBe('completed');
  return run.runId;
}

/** Every key under the test's prefix. */
async function keysOf(r: RedisClient, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await r.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    keys.push(...found);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

/**
 * What Redis still holds of a run: keys named after it, and entries naming it in the sorted sets,
 * sets and hashes under the prefix (indexes, tags-of, text-of, directive-of, expiring, the
 * queues' finished sets). The queues' event streams are left out: they keep their last 10,000
 * events, whatever runs they were about.
 */
async function tracesOf(runId: string): Promise<string[]> {
  const r = redis.redis;
  const traces: string[] = [];
  for (const key of await keysOf(r, redis.prefix)) {
    if (key.includes(runId)) traces.push(key);
    const type = await r.type(key);
    const members =
      type === 'zset'
        ? await r.zrange(key, 0, -1)
        : type === 'set'
          ? await r.smembers(key)
          : type === 'hash'
            ? await r.hkeys(key)
            : [];
    for (const m of members) if (m.includes(runId)) traces.push(`${key} ∋ ${m}`);
    if (type === 'string' && (await r.get(key))?.includes(runId)) traces.push(`${key} = …`);
  }
  return traces;
}

/** Waits until Redis holds nothing of the run; fails listing what is left. */
async function gone(runId: string, timeoutMs = 15_000): Promise<void> {
  await waitFor(async () => (await tracesOf(runId)).length === 0, {
    what: `every key of run ${runId} to go`,
    timeoutMs,
    intervalMs: 200,
  }).catch(async (err: unknown) => {
    expect(await tracesOf(runId), String(err)).toEqual([]);
  });
}

describe('retention on Redis', { timeout: 60_000 }, () => {
  it("keeps an ended run for the project's retention, then removes every key of it: hash, feed, indexes, directive text and tool jobs", async () => {
    const dirigent = await open('redis', project('2s', { echo: ECHO() }));
    const runId = await ended(dirigent, 'echo');
    const r = redis.redis;
    const ttl = await r.ttl(`${redis.prefix}:run:${runId}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(2);
    expect(await r.ttl(`${redis.prefix}:run:${runId}:feed`)).toBeLessThanOrEqual(2);
    // While it is kept: its record, its tag index, and its two tool jobs (finished, kept an hour).
    expect((await dirigent.list({ tags: { customer: 'c1' } })).runs.map((x) => x.runId)).toEqual([
      runId,
    ]);
    const jobs = (await keysOf(r, `${redis.prefix}:dirigent-tools`)).filter((k) =>
      k.startsWith(`${redis.prefix}:dirigent-tools:${runId}.`),
    );
    expect(jobs).toHaveLength(2);
    const kept = await tracesOf(runId);
    for (const part of [
      ':run:',
      ':feed',
      ':runs:status:completed',
      ':runs:tag:customer=c1',
      ':runs:text-of',
      ':dirigent-tools:completed',
    ])
      expect(
        kept.some((t) => t.includes(part)),
        `${part} in ${kept.join(', ')}`,
      ).toBe(true);

    await gone(runId);
    expect(await keysOf(r, `${redis.prefix}:directive-text`)).toEqual([]);
    await expect(dirigent.get(runId)).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    expect((await dirigent.list({})).runs).toEqual([]);
  });

  it("expires a run after its directive's <retention days>, which wins over the project's", async () => {
    const dirigent = await open(
      'redis',
      project('1h', { brief: ECHO('<retention days="0.00002"/>'), kept: ECHO() }),
    );
    const brief = await ended(dirigent, 'brief', 'b');
    const kept = await ended(dirigent, 'kept', 'k');
    const r = redis.redis;
    expect(await r.ttl(`${redis.prefix}:run:${brief}`)).toBeLessThanOrEqual(2);
    const ttl = await r.ttl(`${redis.prefix}:run:${kept}`);
    expect(ttl).toBeGreaterThan(3590);
    expect(ttl).toBeLessThanOrEqual(3600);

    await gone(brief);
    expect((await dirigent.list({})).runs.map((x) => x.runId)).toEqual([kept]);
    expect((await dirigent.get(kept)).status).toBe('completed');
  });

  it('keeps ended runs 7 days when neither the project nor the directive says, and waiting runs whatever the retention', async () => {
    const bare = await open('redis', project(undefined, { echo: ECHO() }));
    const week = await ended(bare, 'echo');
    const ttl = await redis.redis.ttl(`${redis.prefix}:run:${week}`);
    expect(ttl).toBeGreaterThan(7 * 86_400 - 60);
    expect(ttl).toBeLessThanOrEqual(7 * 86_400);

    const short = await open('redis', project('1s', { ask: ASK }));
    const asking = await short.start({ directive: 'ask' });
    expect((await asking.wait()).status).toBe('waiting');
    expect(await redis.redis.ttl(`${redis.prefix}:run:${asking.runId}`)).toBe(-1);
  });
});

describe('finished jobs on Redis', () => {
  it('are removed by a prune once older than a day, as BullMQ does only when another job of the queue finishes', async () => {
    const r = redis.redis;
    const queue = `${redis.prefix}:dirigent-tools`;
    const at = { old: Date.now() - 2 * 86_400_000, recent: Date.now() - 60_000 };
    for (const [name, finishedOn] of Object.entries(at)) {
      const id = `${name}-run.step.1.1`;
      await r.hset(`${queue}:${id}`, 'data', '{}', 'finishedOn', finishedOn);
      await r.rpush(`${queue}:${id}:logs`, 'a line');
      await r.zadd(`${queue}:${name === 'old' ? 'failed' : 'completed'}`, finishedOn, id);
    }
    await new RedisRunStore(r, { prefix: redis.prefix }).prune();
    expect((await keysOf(r, queue)).sort()).toEqual([
      `${queue}:completed`,
      `${queue}:recent-run.step.1.1`,
      `${queue}:recent-run.step.1.1:logs`,
    ]);
  });
});

describe('retention embedded', { timeout: 30_000 }, () => {
  const fileOf = (dir: string, runId: string) => join(dir, '.dirigent', 'runs', `${runId}.json`);

  it("removes an ended run from .dirigent/runs/ once the project's retention is over", async () => {
    const dir = project('1s', { echo: ECHO() });
    const dirigent = await open('embedded', dir);
    const runId = await ended(dirigent, 'echo');
    expect(existsSync(fileOf(dir, runId))).toBe(true);
    await waitFor(async () => (await dirigent.list({})).runs.length === 0, {
      what: 'the run to leave the list',
      intervalMs: 100,
    });
    expect(existsSync(fileOf(dir, runId))).toBe(false);
    await expect(dirigent.get(runId)).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
  });

  it("counts a directive's <retention days> over the project's, and keeps waiting runs", async () => {
    const dir = project('1h', {
      brief: ECHO('<retention days="0.00002"/>'),
      kept: ECHO(),
      ask: ASK,
    });
    const dirigent = await open('embedded', dir);
    const brief = await ended(dirigent, 'brief');
    const kept = await ended(dirigent, 'kept');
    const asking = await dirigent.start({ directive: 'ask' });
    expect((await asking.wait()).status).toBe('waiting');
    await waitFor(async () => !(await dirigent.list({})).runs.some((x) => x.runId === brief), {
      what: 'the brief run to leave the list',
      intervalMs: 100,
    });
    expect(existsSync(fileOf(dir, brief))).toBe(false);
    expect((await dirigent.list({})).runs.map((x) => x.runId).sort()).toEqual(
      [kept, asking.runId].sort(),
    );
  });
});
