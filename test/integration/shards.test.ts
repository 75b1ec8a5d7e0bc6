/**
 * A deployment spread over shards (`redis/shards/shard-layout.ts`): on one Redis here, and on the
 * `cluster` project's Redis Cluster too. Runs spread over the shards and every face reads them as
 * one deployment: lists page through all shards, counts add up, a run is found, signalled and
 * cancelled by its id alone, a child lives on its parent's shard, a concurrency key holds across
 * shards; a process given another number of shards is refused; a worker may serve some shards.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Dirigent } from '../../src/operations/dirigent.js';
import { DirigentWorker } from '../../src/worker/dirigent-worker.js';
import { layoutFor } from '../../src/redis/shards/shard-count.js';
import { keySlot } from '../../src/redis/shards/shard-layout.js';
import { SILENT_LOGGER } from '../../src/telemetry/logger.js';
import { writeDirective } from '../support/directive-file.js';
import { redisForTest } from '../support/redis.js';
import { rejection } from '../support/thrown.js';

const redis = redisForTest();
const SHARDS = 3;
let closers: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
});

/** A project with the directives the specifications run. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-shards-'));
  const directives = join(dir, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeDirective(
    directives,
    'hello',
    `<inputs><input name="who" type="string" required="true"/></inputs>
    <process><step name="greet"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo hello {input:who}"/></execute></step></process>
    <outputs><output name="said" expr="$trim(steps.greet.result.stdout)"/></outputs>`,
  );
  writeDirective(
    directives,
    'parent',
    `<inputs><input name="who" type="string" required="true"/></inputs>
    <process><step name="child"><execute item_type="directive" item_id="hello"><param name="who" value="{input:who}"/></execute></step></process>
    <outputs><output name="said" value="\${steps.child.result.said}"/></outputs>`,
  );
  writeDirective(
    directives,
    'ask',
    `<process><step name="hold"><wait signal="go"/></step></process>
    <outputs><output name="answer" value="\${steps.hold.result}"/></outputs>`,
  );
  writeDirective(
    directives,
    'keyed',
    `<metadata><concurrency key="one" limit="1"/></metadata>
    <inputs><input name="n" type="integer" required="true"/></inputs>
    <process><step name="work"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo start {input:n} >> keyed.log; sleep 0.05; echo end {input:n} >> keyed.log"/></execute></step></process>`,
  );
  closers.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A worker serving `shardsServed` (default all) and a client, both with {@link SHARDS} shards. */
async function deployment(dir: string, shardsServed?: number[]): Promise<Dirigent> {
  const worker = new DirigentWorker({
    redis: redis.url,
    prefix: redis.prefix,
    project: dir,
    shards: SHARDS,
    logger: SILENT_LOGGER,
    queues: ['runs', 'tools'],
    ...(shardsServed && { shardsServed }),
  });
  await worker.start();
  closers.push(() => worker.close());
  const dirigent = await Dirigent.open({
    project: dir,
    redis: redis.url,
    prefix: redis.prefix,
    shards: SHARDS,
  });
  closers.push(() => dirigent.close());
  return dirigent;
}

const layout = () => layoutFor(redis.url, redis.prefix, SHARDS);

describe('a deployment spread over shards', { timeout: 60_000 }, () => {
  it('spreads runs over every shard, each run kept under its own shard’s tag', async () => {
    const dirigent = await deployment(project());
    const handles = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        dirigent.start({ directive: 'hello', inputs: { who: `n${i}` } }),
      ),
    );
    const outputs = await Promise.all(handles.map((h) => h.result()));
    expect(outputs).toEqual(Array.from({ length: 30 }, (_, i) => ({ said: `hello n${i}` })));
    const l = layout();
    const shards = new Set(handles.map((h) => l.shardOf(h.runId)));
    expect([...shards].sort()).toEqual([0, 1, 2]);
    for (const h of handles) {
      const own = l.prefixOf(h.runId);
      expect(await redis.redis.exists(`${own}:run:${h.runId}`)).toBe(1);
      for (const other of l.prefixes.filter((p) => p !== own))
        expect(await redis.redis.exists(`${other}:run:${h.runId}`)).toBe(0);
    }
    // Each shard's keys share one hash slot, and the shards' slots differ.
    const slots = l.prefixes.map((p) => keySlot(`${p}:run:x`));
    expect(new Set(slots).size).toBe(SHARDS);
  });

  it('lists all shards newest first, page after page, and counts them all', async () => {
    const dirigent = await deployment(project());
    const ids: string[] = [];
    for (let i = 0; i < 14; i++) {
      const h = await dirigent.start({ directive: 'hello', inputs: { who: `n${i}` } });
      await h.result();
      ids.push(h.runId);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await dirigent.list({ limit: 4, ...(cursor !== undefined && { cursor }) });
      expect(page.runs.length).toBeLessThanOrEqual(4);
      seen.push(...page.runs.map((r) => r.runId));
      cursor = page.next;
    } while (cursor !== undefined);
    // Started one after another: newest first is the start order reversed, nothing twice.
    expect(seen).toEqual([...ids].reverse());
    const counts = await dirigent.runs.counts({ directive: 'hello' });
    expect(counts.total).toBe(14);
    expect(counts.byStatus.completed).toBe(14);
  });

  it('finds, signals and cancels a run by its id alone, and runs a child on its parent’s shard', async () => {
    const dirigent = await deployment(project());
    const asked = await Promise.all([1, 2, 3, 4].map(() => dirigent.start({ directive: 'ask' })));
    for (const h of asked) expect((await h.wait()).status).toBe('waiting');
    await dirigent.signal(asked[0]!.runId, 'go', 'yes');
    expect(await asked[0]!.result()).toEqual({ answer: 'yes' });
    for (const h of asked.slice(1)) await dirigent.cancel(h.runId, 'not needed');
    for (const h of asked.slice(1)) expect((await h.status()).status).toBe('cancelled');

    const parent = await dirigent.start({ directive: 'parent', inputs: { who: 'Ada' } });
    expect(await parent.result()).toEqual({ said: 'hello Ada' });
    const view = await dirigent.runs.inspect(parent.runId);
    const children = (await dirigent.list({ directive: 'hello' })).runs;
    expect(children).toHaveLength(1);
    expect(layout().shardOf(children[0]!.runId)).toBe(layout().shardOf(parent.runId));
    expect(view.record.status).toBe('completed');
  });

  it('holds a concurrency key across shards: its runs never overlap, whatever shard they are on', async () => {
    const dir = project();
    const dirigent = await deployment(dir);
    const runs = await Promise.all(
      Array.from({ length: 9 }, (_, n) => dirigent.start({ directive: 'keyed', inputs: { n } })),
    );
    expect(new Set(runs.map((r) => layout().shardOf(r.runId))).size).toBeGreaterThan(1);
    for (const run of runs) expect((await run.wait()).status).toBe('completed');
    const log = readFileSync(join(dir, 'keyed.log'), 'utf8').trim().split('\n');
    expect(log.map((l) => l.split(' ')[0])).toEqual(
      Array.from({ length: 18 }, (_, i) => (i % 2 === 0 ? 'start' : 'end')),
    );
  });

  it('refuses a client or a worker given another number of shards, naming both', async () => {
    const dir = project();
    await deployment(dir);
    const client = await rejection(
      Dirigent.open({ project: dir, redis: redis.url, prefix: redis.prefix, shards: 5 }),
    );
    expect(client).toMatchObject({ code: 'INVALID_CONFIG' });
    expect(client.message).toContain(`has ${SHARDS} shard(s)`);
    const worker = new DirigentWorker({
      redis: redis.url,
      prefix: redis.prefix,
      project: dir,
      shards: 1,
      logger: SILENT_LOGGER,
    });
    expect(await rejection(worker.start())).toMatchObject({ code: 'INVALID_CONFIG' });
  });

  it('lets a worker serve some shards: the others’ runs wait, and readiness names them', async () => {
    const dirigent = await deployment(project(), [0]);
    const ready = await dirigent.ready();
    expect(ready.ok).toBe(false);
    expect(ready.detail).toContain('shards 1, 2');
    const handles = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        dirigent.start({ directive: 'hello', inputs: { who: `n${i}` } }),
      ),
    );
    const onZero = handles.filter((h) => layout().shardOf(h.runId) === 0);
    const elsewhere = handles.filter((h) => layout().shardOf(h.runId) !== 0);
    expect(onZero.length).toBeGreaterThan(0);
    expect(elsewhere.length).toBeGreaterThan(0);
    for (const h of onZero) expect((await h.wait()).status).toBe('completed');
    for (const h of elsewhere) expect((await h.status()).status).toBe('queued');
  });
});
