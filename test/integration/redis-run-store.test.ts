import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StepRecord } from '../../src/compiler/run-context.js';
import { DirectiveLoader } from '../../src/engine/directive-loader.js';
import { Engine } from '../../src/engine/engine.js';
import { MemoryRunStore } from '../../src/engine/memory-run-store.js';
import type { RunStatus } from '../../src/engine/run-record.js';
import type { RunStore, StoredRun } from '../../src/engine/run-store.js';
import { DirigentError } from '../../src/errors/dirigent-error.js';
import {
  pingRedis,
  printableRedisUrl,
  redisDownMessage,
  redisUrl,
} from '../../src/redis/redis-connection.js';
import {
  RedisRunStore,
  type RedisRunStoreOptions,
} from '../../src/redis/run-store/redis-run-store.js';
import { textKey } from '../../src/redis/run-store/run-hash.js';
import { PendingEvents } from '../../src/redis/run-store/pending-events.js';
import { countStoredRuns } from '../../src/redis/run-store/redis-run-counts.js';
import { saveRunArgs } from '../../src/redis/run-store/run-store-scripts.js';
import { contentHash } from '../../src/directive/parse-directive.js';
import { BuiltinDispatcher } from '../../src/tools/builtin-dispatcher.js';
import { redisForTest } from '../support/redis.js';
import { writeDirective } from '../support/directive-file.js';
import { waitFor } from '../support/wait-for.js';
import { REPO_ROOT } from '../support/paths.js';

const t = redisForTest();
const storeFor = (options: RedisRunStoreOptions = {}, redis = t.redis) =>
  new RedisRunStore(redis, { prefix: t.prefix, ...options });

let project: string;
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-redis-store-'));
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

function write(name: string, xml: string): string {
  return writeDirective(project, name, xml);
}

const reviewXml = `<inputs><input name="who" type="string" default="Ada"/></inputs>
<process>
  <step name="draft"><render>Notes for \${inputs.who}</render></step>
  <step name="count"><assign name="n" expr="$count([1, 2, 3])"/><render>three</render></step>
  <step name="ask"><instruction>Ship \${steps.draft.result}?</instruction></step>
  <step name="done"><render>answer: \${steps.ask.result}</render></step>
</process><outputs><output name="text" value="\${steps.done.result}"/></outputs>`;

const engineWith = (store: RunStore, durable = false) =>
  new Engine({
    projectDir: project,
    dispatcher: new BuiltinDispatcher(),
    loader: new DirectiveLoader(project),
    store,
    durable,
  });

/** A real StoredRun: the directive above run by the embedded engine up to its instruction. */
async function waitingRun(): Promise<StoredRun> {
  const memory = new MemoryRunStore();
  const engine = engineWith(memory);
  const record = await engine.run(await engine.loader.loadFile(write('review', reviewXml)), {});
  engine.release();
  expect(record.status).toBe('waiting');
  const stored = await memory.load(record.runId);
  if (!stored) throw new Error('the memory store lost the run');
  return stored;
}

/** Resolves once every run of `runIds` has expired (its hash is gone), after its retention. */
async function expired(store: RedisRunStore, ...runIds: string[]): Promise<void> {
  await waitFor(async () => (await t.redis.exists(...runIds.map((id) => store.runKey(id)))) === 0, {
    what: `the retention of ${runIds.join(', ')} to pass`,
    timeoutMs: 5000,
  });
}

let ids = 0;
/** A small hand-built run. */
function runOf(status: RunStatus, startedAt: number, directive = 'demo'): StoredRun {
  const runId = `run-${++ids}`;
  const step: StepRecord = {
    status: 'completed',
    result: { n: 1 },
    error: null,
    attempts: 1,
    startedAt,
    endedAt: startedAt + 1,
  };
  return {
    record: {
      runId,
      directive,
      status,
      outputs: null,
      steps: [{ name: 'a', status: 'completed', attempts: 1, durationMs: 1 }],
      error: null,
      startedAt,
      endedAt: status === 'running' || status === 'waiting' ? null : startedAt + 10,
    },
    snapshot: { value: 'a', context: {} },
    source: { file: `${directive}.md`, text: '<directive/>', hash: contentHash('<directive/>') },
    projectDir: '/p',
    depth: 0,
    parentRunId: null,
    children: {},
    steps: { a: step },
    counters: { transitions: 1, spawns: 0 },
  };
}

const withStatus = (run: StoredRun, status: RunStatus): StoredRun => ({
  ...run,
  record: { ...run.record, status },
});

async function rejection(promise: Promise<unknown>): Promise<DirigentError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DirigentError) return err;
    throw err;
  }
  throw new Error('expected a DirigentError, but the promise resolved');
}

describe('RedisRunStore: layout and round trip', () => {
  it('stores a real run field by field and loads it back unchanged, with its version', async () => {
    const run = await waitingRun();
    const store = storeFor();
    await store.save(run);
    const loaded = await store.load(run.record.runId);
    expect(loaded).toEqual({ ...run, version: 1 });
    // A fresh store (another process) reads the same.
    expect(await storeFor({}, t.connect()).load(run.record.runId)).toEqual({ ...run, version: 1 });

    const hash = await t.redis.hgetall(store.runKey(run.record.runId));
    expect(Object.keys(hash).sort()).toEqual(
      [
        'directive',
        'etag',
        'status',
        'texthash',
        'version',
        ...Object.keys(run.steps).map((name) => `s:${name}`),
        ...run.record.steps.map((_, i) => `entry:${i}`),
      ].sort(),
    );
    // The record's list of step entries is kept entry by entry, so that a save adds the new ones.
    expect(run.record.steps.length).toBeGreaterThan(0);
    expect(JSON.parse(hash['entry:0']!)).toEqual(run.record.steps[0]);
    expect(Object.keys(run.steps)).toEqual(expect.arrayContaining(['draft', 'count', 'ask']));
    // Step records leave out what is at its default (no error, one attempt…).
    const draft = JSON.parse(hash['s:draft']!) as Record<string, unknown>;
    expect(draft).toMatchObject({ status: 'completed', result: run.steps.draft!.result });
    expect(draft).not.toHaveProperty('error');
    expect(hash.status).toBe('waiting');
    expect(hash.texthash).toBe(run.source.hash);
    // The larger parts are lines of the run's body, each without what the hash holds or what is
    // at its default.
    const body = (await t.redis.get(store.bodyKey(run.record.runId)))!.split('\n');
    expect(body).toHaveLength(5);
    const [meta, record, snapshot, counters, children] = body;
    expect(JSON.parse(meta!)).toEqual({
      dir: project,
      in: run.source.file.slice(project.length + 1),
    });
    const kept: Record<string, unknown> = { ...run.record };
    for (const name of ['runId', 'directive', 'status', 'steps', 'outputs', 'error', 'endedAt'])
      delete kept[name];
    expect(JSON.parse(record!)).toEqual(kept);
    expect(snapshot!.startsWith('~')).toBe(true);
    expect(JSON.parse(counters!)).toEqual({ transitions: run.counters.transitions });
    expect(JSON.parse(children!)).toEqual({});
    expect(await store.load('no-such-run')).toBeUndefined();
  });

  it('keeps a waiting run that another engine resumes to the end', async () => {
    const first = engineWith(storeFor({}, t.connect()));
    const file = write('review', reviewXml);
    const waiting = await first.run(await first.loader.loadFile(file), { who: 'Grace' });
    expect(waiting.status).toBe('waiting');
    first.release();

    const store = storeFor({}, t.connect());
    const second = engineWith(store);
    const done = await second.signal(waiting.runId, 'ask', 'yes');
    expect(done.status).toBe('completed');
    expect(done.outputs).toEqual({ text: 'answer: yes' });
    const stored = await storeFor().load(waiting.runId);
    expect(stored?.record).toEqual(done);
    expect(stored?.steps.ask?.result).toBe('yes');
    expect(await t.redis.ttl(store.runKey(waiting.runId))).toBeGreaterThan(0);
  });

  it('follows a durable engine, which gathers the transitions of fast steps into few writes', async () => {
    const steps = Array.from(
      { length: 12 },
      (_, i) => `<step name="s${i}"><render>${i}</render></step>`,
    );
    const file = write('many', `<process>${steps.join('')}</process>`);
    const memory = new MemoryRunStore();
    const viaMemory = engineWith(memory);
    const expected = await viaMemory.run(await viaMemory.loader.loadFile(file), {});
    const store = storeFor();
    const durable = engineWith(store, true);
    const record = await durable.run(await durable.loader.loadFile(file), {});
    await durable.drain();
    const stored = await store.load(record.runId);
    expect(stored?.record.status).toBe('completed');
    expect(stored?.record.steps.map((s) => s.name)).toEqual(expected.steps.map((s) => s.name));
    expect(Object.keys(stored?.steps ?? {}).sort()).toEqual(steps.map((_, i) => `s${i}`).sort());
    // Twelve transitions within a few milliseconds: written far fewer times than once each.
    expect(stored?.version).toBeLessThan(6);
  });

  it('stores a durable run while it goes, when its steps take longer than a write is put off', async () => {
    const nap = (name: string) =>
      `<step name="${name}"><execute item_type="tool" item_id="dirigent/util/sleep"><param name="ms" value="80"/></execute></step>`;
    const file = write('naps', `<process>${nap('a')}${nap('b')}${nap('c')}</process>`);
    const store = storeFor();
    const durable = engineWith(store, true);
    const versions: number[] = [];
    const loaded = await durable.loader.loadFile(file);
    let ended = false;
    const running = durable.run(loaded, {}).finally(() => (ended = true));
    // Reads the stored run over and over while it goes.
    const watcher = (async () => {
      while (!ended) {
        const runs = await store.list({ status: 'running' });
        const run = runs[0] && (await store.load(runs[0].runId));
        if (run) versions.push(run.version);
        await new Promise((r) => setImmediate(r));
      }
    })();
    const record = await running;
    await watcher;
    expect(record.status).toBe('completed');
    // Seen running at two versions at least: each step's transitions were stored before the next.
    expect(new Set(versions).size).toBeGreaterThanOrEqual(2);
  });
});

describe('RedisRunStore: writing only what changed', () => {
  it('does not rewrite fields that did not change since its last write', async () => {
    const store = storeFor();
    const run = await waitingRun();
    await store.save(run);
    const key = store.runKey(run.record.runId);
    // Marks a field and a line of the body behind the store's back: a rewrite would overwrite them.
    const bodyKey = store.bodyKey(run.record.runId);
    const lines = (await t.redis.get(bodyKey))!.split('\n');
    await t.redis.hset(key, 's:draft', '"untouched"');
    await t.redis.set(bodyKey, ['"untouched"', ...lines.slice(1)].join('\n'));
    run.steps.ask = { ...run.steps.ask!, status: 'completed', result: 'yes' };
    run.record = { ...run.record, status: 'completed' };
    run.counters = { ...run.counters, transitions: run.counters.transitions + 1 };
    expect(await store.saveVersioned(run)).toBe(2);
    const hash = await t.redis.hgetall(key);
    expect(hash['s:draft']).toBe('"untouched"');
    const [meta, record, , counters] = (await t.redis.get(bodyKey))!.split('\n');
    expect(meta).toBe('"untouched"');
    expect(record).toBe(lines[1]); // the record less its status: the same
    expect(JSON.parse(counters!)).toEqual({ transitions: run.counters.transitions });
    expect(JSON.parse(hash['s:ask']!)).toMatchObject({ status: 'completed', result: 'yes' });
    expect(hash.status).toBe('completed');
  });

  it('applies a save sent again after a reconnect once, and tells its events once', async () => {
    const store = storeFor();
    const run = await waitingRun();
    await store.save(run);
    const { runId } = run.record;
    const before = await t.redis.llen(store.feedKey(runId));
    // The same write twice, as ioredis sends a command again when the connection died under it
    // (a failover) after Redis had applied it.
    const args = saveRunArgs(store, 'diff', run.record, {
      expectVersion: 1,
      baseEtag: (await t.redis.hget(store.runKey(runId), 'etag'))!,
      etag: 'resent:1',
      fence: '',
      owner: '',
      text: undefined,
      removed: [],
      set: new Map([['step:draft', '"again"']]),
      events: {
        events: [`-${JSON.stringify({ type: 'step.ended', runId, step: 'draft' })}`],
        parents: [],
      },
    });
    expect(await store.redis.dirigentSaveRun(...args)).toEqual(['ok', 2]);
    expect(await store.redis.dirigentSaveRun(...args)).toEqual(['ok', 2]);
    expect(await t.redis.llen(store.feedKey(runId))).toBe(before + 1);
    expect(await t.redis.hget(store.runKey(runId), 'version')).toBe('2');
  });

  it("adds the record's new step entries without writing the earlier ones again", async () => {
    const store = storeFor();
    const run = runOf('running', 1000);
    await store.save(run);
    const key = store.runKey(run.record.runId);
    await t.redis.hset(key, 'entry:0', '"untouched"');
    for (let i = 1; i <= 300; i++) {
      run.record.steps.push({ name: `s${i}`, status: 'completed', attempts: 1, durationMs: i });
      await store.save(run);
    }
    expect(await t.redis.hget(key, 'entry:0')).toBe('"untouched"');
    await t.redis.hset(key, 'entry:0', JSON.stringify(run.record.steps[0]));
    // Another process reads the 301 entries back in their order.
    const loaded = await storeFor({}, t.connect()).load(run.record.runId);
    expect(loaded?.record.steps).toEqual(run.record.steps);
    expect((await store.list())[0]?.steps).toEqual(run.record.steps);
  });

  it('writes everything again when another process wrote the run meanwhile', async () => {
    const mine = storeFor();
    const theirs = storeFor({}, t.connect());
    const run = runOf('running', 1000);
    await mine.save(run);
    const other = structuredClone(run);
    other.steps = { b: { ...run.steps.a!, result: 'theirs' } };
    other.snapshot = { value: 'b' };
    await theirs.save(other);
    run.counters = { transitions: 2, spawns: 0 };
    expect(await mine.saveVersioned(run)).toBe(3);
    expect(await theirs.load(run.record.runId)).toEqual({ ...run, version: 3 });
  });

  it('removes step records the run no longer has', async () => {
    const store = storeFor();
    const run = runOf('running', 1000);
    run.steps.b = { ...run.steps.a!, result: 'b' };
    await store.save(run);
    delete run.steps.b;
    await store.save(run);
    expect(await storeFor({}, t.connect()).load(run.record.runId)).toEqual({ ...run, version: 2 });
  });

  it('saves single step records of a stored run', async () => {
    const store = storeFor();
    const run = runOf('running', 1000);
    await store.save(run);
    const item: StepRecord = { ...run.steps.a!, result: 'item 7' };
    expect(await store.saveSteps(run.record.runId, { 'each[7]': item })).toBe(2);
    run.steps['each[7]'] = item;
    expect(await storeFor().load(run.record.runId)).toEqual({ ...run, version: 2 });
    await store.save(run); // the store still knows what it wrote: only changes are sent
    expect((await store.load(run.record.runId))?.version).toBe(3);
    const missing = await rejection(store.saveSteps('no-such-run', { a: item }));
    expect(missing.code).toBe('RUN_NOT_FOUND');
    expect(await t.redis.exists(store.runKey('no-such-run'))).toBe(0);
  });

  it('applies saves of one run in call order, each as it was when called', async () => {
    const store = storeFor();
    const run = runOf('running', 1000);
    const saves: Promise<void>[] = [];
    for (let i = 0; i < 30; i++) {
      run.steps[`s${i}`] = { ...run.steps.a!, result: i };
      run.counters.transitions = i;
      saves.push(store.save(run));
    }
    await Promise.all(saves);
    expect(await storeFor({}, t.connect()).load(run.record.runId)).toEqual({ ...run, version: 30 });
  });
});

describe('RedisRunStore: optimistic concurrency', () => {
  it('lets exactly one of many concurrent saves with the same expected version win', async () => {
    const run = runOf('running', 1000);
    await storeFor().save(run);
    const clients = Array.from({ length: 4 }, () => t.connect());
    const attempts = Array.from({ length: 40 }, (_, i) => {
      const store = storeFor({}, clients[i % clients.length]);
      const mine = structuredClone(run);
      mine.counters.transitions = 100 + i;
      return store.saveVersioned(mine, { expectVersion: 1 });
    });
    const outcomes = await Promise.allSettled(attempts);
    const won = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
    expect(won).toHaveLength(1);
    expect(outcomes[won[0]!]).toEqual({ status: 'fulfilled', value: 2 });
    for (const o of outcomes) {
      if (o.status === 'fulfilled') continue;
      expect(o.reason).toBeInstanceOf(DirigentError);
      expect(o.reason).toMatchObject({
        code: 'RUN_CONFLICT',
        retryable: true,
        details: { runId: run.record.runId, expectedVersion: 1, actualVersion: 2 },
      });
    }
    const stored = await storeFor().load(run.record.runId);
    expect(stored?.version).toBe(2);
    expect(stored?.counters.transitions).toBe(100 + won[0]!);
  });

  it('lets one of many concurrent saves through one store win, too', async () => {
    const store = storeFor();
    const run = runOf('running', 1000);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, () => store.save(run, { expectVersion: 0 })),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect((await store.load(run.record.runId))?.version).toBe(1);
  });

  it('writes nothing on a conflict, and saves again once reloaded', async () => {
    const store = storeFor();
    const run = runOf('running', 1000);
    await store.save(run);
    await store.save(run);
    const stale = withStatus(run, 'completed');
    const err = await rejection(store.save(stale, { expectVersion: 1 }));
    expect(err.code).toBe('RUN_CONFLICT');
    expect(err.message).toContain('expected version 1, found 2');
    expect(await t.redis.zscore(store.indexKey({ status: 'completed' }), run.record.runId)).toBe(
      null,
    );
    const fresh = await store.load(run.record.runId);
    expect(fresh?.record.status).toBe('running');
    expect(await store.saveVersioned(stale, { expectVersion: fresh!.version })).toBe(3);
  });
});

describe('RedisRunStore: indexes, listing, retention and deletion', () => {
  it('moves a run between the status indexes as its status changes', async () => {
    const store = storeFor();
    const run = runOf('running', 5000, 'mover');
    const id = run.record.runId;
    const where = async () => {
      const found: string[] = [];
      for (const status of ['running', 'waiting', 'completed', 'failed', 'cancelled'] as const)
        if ((await t.redis.zscore(store.indexKey({ status }), id)) !== null) found.push(status);
      return found;
    };
    await store.save(run);
    expect(await where()).toEqual(['running']);
    await store.save(withStatus(run, 'waiting'));
    expect(await where()).toEqual(['waiting']);
    await store.save(withStatus(run, 'failed'));
    expect(await where()).toEqual(['failed']);
    expect(await t.redis.exists(`${t.prefix}:runs`)).toBe(0); // all runs: the status indexes

    expect(await t.redis.zscore(store.indexKey({ directive: 'mover' }), id)).toBe('5000');
  });

  it('lists newest first, by status, by directive, with a limit', async () => {
    const store = storeFor();
    const runs = [
      runOf('completed', 1000, 'alpha'),
      runOf('waiting', 4000, 'beta'),
      runOf('completed', 3000, 'beta'),
      runOf('failed', 2000, 'alpha'),
      runOf('completed', 5000, 'alpha'),
    ];
    for (const run of runs) await store.save(run);
    const idsOf = (records: { runId: string }[]) => records.map((r) => r.runId);
    const [r1, r4, r3, r2, r5] = runs.map((r) => r.record.runId);
    expect(idsOf(await store.list())).toEqual([r5, r4, r3, r2, r1]);
    expect(await store.list()).toEqual(
      [runs[4], runs[1], runs[2], runs[3], runs[0]].map((r) => r!.record),
    );
    expect(idsOf(await store.list({ status: 'completed' }))).toEqual([r5, r3, r1]);
    expect(idsOf(await store.list({ directive: 'alpha' }))).toEqual([r5, r2, r1]);
    expect(idsOf(await store.list({ directive: 'alpha', status: 'completed' }))).toEqual([r5, r1]);
    expect(idsOf(await store.list({ status: 'completed', limit: 2 }))).toEqual([r5, r3]);
    expect(idsOf(await store.list({ limit: 1 }))).toEqual([r5]);
    expect(await store.list({ limit: 0 })).toEqual([]);
    expect(await store.list({ directive: 'nothing' })).toEqual([]);
    // RunStore's list() with no arguments, through the port.
    const port: RunStore = store;
    expect(idsOf(await port.list())).toEqual([r5, r4, r3, r2, r1]);
  });

  it('lists more runs than one page holds', async () => {
    const store = storeFor();
    for (let i = 0; i < 450; i++) await store.save(runOf(i % 3 ? 'completed' : 'failed', i));
    const all = await store.list();
    expect(all).toHaveLength(450);
    expect(all.map((r) => r.startedAt)).toEqual(Array.from({ length: 450 }, (_, i) => 449 - i));
    expect(await store.list({ status: 'failed' })).toHaveLength(150);
    expect(await store.list({ status: 'completed', limit: 299 })).toHaveLength(299);
  });

  it('lists all runs as one index would, merging the status indexes: newest first, equal starts in descending id order, from a cursor on', async () => {
    const store = storeFor();
    const statuses = ['running', 'waiting', 'paused', 'completed', 'failed', 'cancelled'] as const;
    const runs: StoredRun[] = [];
    // 450 runs over six indexes, three at each start time, each of another status.
    for (let i = 0; i < 450; i++) runs.push(runOf(statuses[i % 6]!, Math.floor(i / 3)));
    for (const run of runs) await store.save(run);
    const newestFirst = runs
      .map((r) => r.record)
      .sort((a, b) => b.startedAt - a.startedAt || (a.runId < b.runId ? 1 : -1));
    const all = await store.list();
    expect(all.map((r) => r.runId)).toEqual(newestFirst.map((r) => r.runId));
    expect(all).toEqual(newestFirst);
    const from = newestFirst[220]!;
    const rest = await store.list({ after: { startedAt: from.startedAt, runId: from.runId } });
    expect(rest.map((r) => r.runId)).toEqual(newestFirst.slice(221).map((r) => r.runId));
    const window = await store.list({ since: 10, until: 20, limit: 7 });
    expect(window.map((r) => r.runId)).toEqual(
      newestFirst
        .filter((r) => r.startedAt >= 10 && r.startedAt <= 20)
        .slice(0, 7)
        .map((r) => r.runId),
    );
  });

  it('sets the retention TTL on ended runs only', async () => {
    const store = storeFor({ retentionSeconds: 3600 });
    const run = runOf('running', 1000);
    const key = store.runKey(run.record.runId);
    await store.save(run);
    expect(await t.redis.ttl(key)).toBe(-1);
    await store.save(withStatus(run, 'waiting'));
    expect(await t.redis.ttl(key)).toBe(-1);
    for (const status of ['completed', 'failed', 'cancelled'] as const) {
      const ended = runOf(status, 2000);
      await store.save(ended);
      const ttl = await t.redis.ttl(store.runKey(ended.record.runId));
      expect(ttl).toBeGreaterThan(3590);
      expect(ttl).toBeLessThanOrEqual(3600);
    }
    await store.save(withStatus(run, 'cancelled'));
    expect(await t.redis.ttl(key)).toBeGreaterThan(3590);
    await store.save(withStatus(run, 'running')); // resumed: kept again
    expect(await t.redis.ttl(key)).toBe(-1);

    const forever = storeFor({ retentionSeconds: Infinity });
    const kept = runOf('completed', 3000);
    await forever.save(kept);
    expect(await t.redis.ttl(forever.runKey(kept.record.runId))).toBe(-1);
    expect(() => storeFor({ retentionSeconds: 0 })).toThrow(/retentionSeconds/);
  });

  it('never lists runs whose hash is gone, and removes their index entries', async () => {
    const store = storeFor();
    const gone = runOf('completed', 2000, 'alpha');
    const kept = runOf('completed', 1000, 'alpha');
    await store.save(gone);
    await store.save(kept);
    const id = gone.record.runId;
    await t.redis.del(store.runKey(id)); // as the expiry would (its body and feed go with it)
    expect((await store.list({ directive: 'alpha' })).map((r) => r.runId)).toEqual([
      kept.record.runId,
    ]);
    for (const key of [
      store.indexKey({ status: 'completed' }),
      store.indexKey({ directive: 'alpha' }),
      `${t.prefix}:runs:expiring`,
    ])
      expect(await t.redis.zscore(key, id)).toBe(null);
    expect(await t.redis.hget(`${t.prefix}:runs:directive-of`, id)).toBe(null);
    expect(await t.redis.exists(store.bodyKey(id))).toBe(0);
    expect(await store.list({ status: 'completed', limit: 1 })).toEqual([kept.record]);
  });

  it('prunes the index entries of runs whose retention is over', async () => {
    const store = storeFor({ retentionSeconds: 1 });
    const ended = runOf('failed', 2000, 'short');
    const waiting = runOf('waiting', 1000, 'short');
    await store.save(ended);
    await store.save(waiting);
    expect(await store.prune()).toBe(0);
    await expired(store, ended.record.runId);
    expect(await store.prune()).toBe(1);
    for (const key of [
      store.indexKey({ status: 'failed' }),
      store.indexKey({ directive: 'short' }),
    ])
      expect(await t.redis.zrange(key, 0, -1)).toEqual(
        key.endsWith(':failed') ? [] : [waiting.record.runId],
      );
    expect(await t.redis.zcard(`${t.prefix}:runs:expiring`)).toBe(0);
    expect(await store.prune()).toBe(0);
  });

  it('retires expired runs from the indexes as other runs are saved', async () => {
    const store = storeFor({ retentionSeconds: 1 });
    const ended = [runOf('completed', 1, 'old'), runOf('cancelled', 2, 'old')];
    for (const run of ended) await store.save(run);
    await expired(store, ...ended.map((r) => r.record.runId));
    await store.save(runOf('running', 3, 'new'));
    expect(await t.redis.zrange(store.indexKey({ directive: 'old' }), 0, -1)).toEqual([]);
    expect(await store.list()).toHaveLength(1);
    expect(await t.redis.zcard(`${t.prefix}:runs:expiring`)).toBe(0);
    // The run left is under way: its hash does not expire, so directive-of need not name it.
    expect(await t.redis.hlen(`${t.prefix}:runs:directive-of`)).toBe(0);
  });

  it('notes what finds the index entries of a run without its hash only while the run expires', async () => {
    const store = storeFor({ retentionSeconds: 3600 });
    const run = runOf('running', 1000, 'noted');
    run.record.tags = { customer: 'c1' };
    const id = run.record.runId;
    const noted = async () =>
      Promise.all(
        ['directive-of', 'text-of', 'tags-of'].map(async (of) =>
          t.redis.hexists(`${t.prefix}:runs:${of}`, id),
        ),
      );
    await store.save(run);
    expect(await noted()).toEqual([0, 0, 0]);
    await store.save(withStatus(run, 'completed'));
    expect(await noted()).toEqual([1, 1, 1]);
    expect(await t.redis.hget(`${t.prefix}:runs:text-of`, id)).toBe(run.source.hash);
    await store.save(withStatus(run, 'running')); // redriven: kept again
    expect(await noted()).toEqual([0, 0, 0]);
    expect(await store.delete(id)).toBe(true);
    expect(await t.redis.keys(`${t.prefix}:*`)).toEqual([]);
  });

  it('deletes a run with its index entries', async () => {
    const store = storeFor();
    const run = runOf('completed', 1000, 'gone');
    await store.save(run);
    expect(await store.delete(run.record.runId)).toBe(true);
    expect(await store.load(run.record.runId)).toBeUndefined();
    expect(await store.list()).toEqual([]);
    const left = await t.redis.keys(`${t.prefix}:*`);
    expect(left).toEqual([]);
    expect(await store.delete(run.record.runId)).toBe(false);
    // Saved again after a delete, it starts over at version 1.
    expect(await store.saveVersioned(run)).toBe(1);
  });
});

describe('RedisRunStore: directive texts, kept once', () => {
  /** A run of directive text `text`, as the engine stores it (with its content hash). */
  const runWith = (status: RunStatus, text: string): StoredRun => {
    const run = runOf(status, Date.now());
    return { ...run, source: { file: 'demo.md', text, hash: contentHash(text) } };
  };
  const keyOf = (store: RedisRunStore, text: string) => textKey(store.prefix, contentHash(text));
  const TEXT = '# Demo\n\n```xml\n<directive name="demo"/>\n```\n'.repeat(40);

  it("keeps a directive's text once for all its runs, out of their hashes, and loads it back", async () => {
    const store = storeFor();
    const runs = [runWith('waiting', TEXT), runWith('running', TEXT), runWith('completed', TEXT)];
    for (const run of runs) await store.save(run);
    expect(await t.redis.get(keyOf(store, TEXT))).toBe(TEXT);
    for (const run of runs) {
      const hash = await t.redis.hgetall(store.runKey(run.record.runId));
      const body = (await t.redis.get(store.bodyKey(run.record.runId)))!;
      expect(body).not.toContain('<directive');
      expect(JSON.parse(body.split('\n')[0]!)).toEqual({ dir: '/p', file: 'demo.md' });
      expect(hash.texthash).toBe(contentHash(TEXT));
      // Another process reads the run whole, its text included.
      expect((await storeFor({}, t.connect()).load(run.record.runId))?.source.text).toBe(TEXT);
    }
    // Only the first save sent the text: the others name it.
    expect(await t.redis.strlen(keyOf(store, TEXT))).toBe(TEXT.length);
  });

  it('keeps the text while a run of it is stored, and deletes it with the last one', async () => {
    const store = storeFor();
    const key = keyOf(store, TEXT);
    const [waiting, ended] = [runWith('waiting', TEXT), runWith('completed', TEXT)];
    await store.save(waiting);
    await store.save(ended);
    expect(await t.redis.get(`${key}:count`)).toBe('2');
    await store.save(withStatus(waiting, 'running')); // saved again: counted once
    expect(await t.redis.get(`${key}:count`)).toBe('2');
    expect(await store.delete(waiting.record.runId)).toBe(true);
    expect(await t.redis.get(key)).toBe(TEXT); // the ended run still reads it
    expect(await store.delete(ended.record.runId)).toBe(true);
    expect(await t.redis.keys(`${t.prefix}:*`)).toEqual([]);
  });

  it('deletes the text once the last run of it has expired and left the indexes', async () => {
    const store = storeFor({ retentionSeconds: 1 });
    const run = runWith('completed', TEXT);
    await store.save(run);
    expect(await t.redis.exists(keyOf(store, TEXT))).toBe(1);
    await expired(store, run.record.runId);
    expect(await store.prune()).toBe(1);
    expect(await t.redis.keys(`${t.prefix}:*`)).toEqual([]);
  });

  it('sends the text again when its key has gone since this store last wrote it', async () => {
    const store = storeFor();
    await store.save(runWith('waiting', TEXT));
    await t.redis.del(keyOf(store, TEXT)); // every run that read it expired meanwhile
    const next = runWith('waiting', TEXT);
    await store.save(next);
    expect(await t.redis.get(keyOf(store, TEXT))).toBe(TEXT);
    expect((await storeFor({}, t.connect()).load(next.record.runId))?.source.text).toBe(TEXT);
  });

  it('keeps an empty text as it keeps any other', async () => {
    const store = storeFor();
    const run = runWith('waiting', '');
    await store.save(run);
    expect(await t.redis.exists(keyOf(store, ''))).toBe(1);
    expect((await storeFor({}, t.connect()).load(run.record.runId))?.source.text).toBe('');
  });

  it('reads runs stored with their text in meta, as stores did before the text key', async () => {
    const store = storeFor();
    const run = runWith('waiting', TEXT);
    const runKey = store.runKey(run.record.runId);
    // The hash such a store wrote: every part a field of its own, the text in meta.
    await t.redis.hset(runKey, {
      record: JSON.stringify({ ...run.record, steps: [] }),
      'entry:0': JSON.stringify(run.record.steps[0]),
      snapshot: JSON.stringify(run.snapshot),
      meta: JSON.stringify({
        source: { file: 'demo.md', text: 'old text' },
        projectDir: run.projectDir,
        depth: 0,
        parentRunId: null,
      }),
      counters: JSON.stringify(run.counters),
      children: '{}',
      'step:a': JSON.stringify(run.steps.a),
      status: 'waiting',
      directive: run.record.directive,
      version: '3',
      etag: 'old:3',
    });
    expect(await storeFor({}, t.connect()).load(run.record.runId)).toEqual({
      ...run,
      source: { file: 'demo.md', text: 'old text' },
      version: 3,
    });
  });

  it('says RUN_SOURCE_MISSING for a run whose text was deleted by hand', async () => {
    const store = storeFor();
    const run = runWith('waiting', TEXT);
    await store.save(run);
    await t.redis.del(keyOf(store, TEXT));
    const err = await rejection(storeFor({}, t.connect()).load(run.record.runId));
    expect(err.code).toBe('RUN_SOURCE_MISSING');
    expect(err.message).toContain(run.record.runId);
  });
});

describe('RedisRunStore: what a waiting run holds', () => {
  const askXml = `<process><step name="ask"><instruction>Approve?</instruction></step></process>`;

  it('keeps a run waiting at its first step in a listpack hash, a body and a feed, in a fraction of what it took whole', async () => {
    const store = storeFor();
    const events = new PendingEvents(() => null);
    store.writeFeedFrom(events);
    const engine = new Engine({
      projectDir: project,
      dispatcher: new BuiltinDispatcher(),
      loader: new DirectiveLoader(project),
      store,
      observer: events.observer,
    });
    const record = await engine.run(await engine.loader.loadFile(write('ask', askXml)), {});
    engine.release();
    expect(record.status).toBe('waiting');
    const key = store.runKey(record.runId);
    const hash = await t.redis.hgetall(key);
    // Every value fits a listpack (hash-max-listpack-value, 64 bytes by default), so Redis keeps
    // the hash as one: a hashtable costs about 60 bytes more per field.
    for (const [field, value] of Object.entries(hash))
      expect(value.length, `${field}: ${value}`).toBeLessThanOrEqual(64);
    expect(await t.redis.object('ENCODING', key)).toBe('listpack');
    const usage = async (k: string) => Number(await t.redis.memory('USAGE', k, 'SAMPLES', 0));
    const bytes =
      (await usage(key)) +
      (await usage(store.bodyKey(record.runId))) +
      (await usage(store.feedKey(record.runId)));
    // The hash alone took 1.8 KB when it held every part whole.
    expect(bytes).toBeLessThan(1400);
    expect((await store.load(record.runId))?.record).toEqual(record);
  });

  it("keeps a run's own events without its id, which a read puts back where it was", async () => {
    const store = storeFor();
    const parentOf = (id: string) => (id === 'child-1' ? 'parent-1' : null);
    const events = new PendingEvents(parentOf);
    store.writeFeedFrom(events);
    const parent = { ...runOf('running', 1000), record: { ...runOf('running', 1000).record } };
    parent.record.runId = 'parent-1';
    const child = runOf('running', 1001);
    child.record.runId = 'child-1';
    const told = [
      { type: 'run.started', runId: 'parent-1', at: 1, directive: 'demo' },
      { type: 'step.started', runId: 'parent-1', at: 2, step: 'a', attempt: 1 },
    ] as const;
    events.observer.runStarted!(parent.record);
    events.observer.stepStarted!('parent-1', 'a', 1);
    await store.save(parent);
    events.observer.stepStarted!('child-1', 'b', 2);
    await store.save(child);
    const kept = await t.redis.lrange(store.feedKey('parent-1'), 0, -1);
    expect(kept[0]).not.toContain('parent-1');
    expect(kept[1]).not.toContain('parent-1');
    // A child's step event in its parent's feed says whose it is.
    expect(JSON.parse(kept[2]!)).toMatchObject({ type: 'step.started', runId: 'child-1' });
    const read = await store.readFeed('parent-1', 0, 10);
    expect(read.outcome).toBe('ok');
    expect(read.events.map((e) => JSON.parse(e) as unknown)).toEqual([
      { ...told[0], at: parent.record.startedAt },
      { ...told[1], at: expect.any(Number) },
      { type: 'step.started', runId: 'child-1', at: expect.any(Number), step: 'b', attempt: 2 },
    ]);
    // Where the event had it, so the JSON is as the engine's event serialised.
    expect(read.events[0]).toBe(
      JSON.stringify({ ...told[0], at: parent.record.startedAt, runId: 'parent-1' }),
    );
    expect((await store.readFeed('child-1', 0, 10)).events.map((e) => JSON.parse(e))).toEqual([
      { type: 'step.started', runId: 'child-1', at: expect.any(Number), step: 'b', attempt: 2 },
    ]);
  });
});

describe('RedisRunStore: runs stored before the body', () => {
  /**
   * Keys a store wrote before runs had a body (the previous version, `git show 2a66cbf`), with
   * the runs it saved: one waiting at an instruction (with its feed), one completed and kept for 7
   * days, with a tag.
   */
  const fixture = JSON.parse(
    readFileSync(join(REPO_ROOT, 'test/fixtures/run-store/stored-before-the-body.json'), 'utf8'),
  ) as {
    runs: [StoredRun, StoredRun];
    keys: Record<string, { type: string; value: unknown; expires?: boolean }>;
  };
  const [waiting, ended] = fixture.runs;
  const WEEK_S = 7 * 86_400;

  /** Writes the fixture's keys under this test's prefix. */
  async function restore(): Promise<void> {
    const r = t.redis;
    const here = (text: string) => text.replaceAll('<prefix>', t.prefix);
    for (const [name, { type, value, expires }] of Object.entries(fixture.keys)) {
      const key = here(name);
      if (type === 'hash') {
        const fields = Object.entries(value as Record<string, string>).map(([f, v]) => [
          f,
          here(v),
        ]);
        await r.hset(key, Object.fromEntries(fields));
      } else if (type === 'string') await r.set(key, value as string);
      else if (type === 'set') await r.sadd(key, ...(value as string[]));
      else if (type === 'list') await r.rpush(key, ...(value as string[]));
      else {
        const flat = value as string[];
        // The expiring run expires a week from now, as it did a week from when it was written.
        const soon = key.endsWith(':runs:expiring') ? Date.now() + WEEK_S * 1000 : undefined;
        for (let i = 0; i < flat.length; i += 2)
          await r.zadd(key, soon ?? Number(flat[i + 1]), flat[i]!);
      }
      if (expires) await r.expire(key, WEEK_S);
    }
  }

  it('loads, lists, counts and follows them as before', async () => {
    await restore();
    const store = storeFor();
    expect(await store.load(waiting.record.runId)).toEqual({ ...waiting, version: 1 });
    expect(await store.load(ended.record.runId)).toEqual({ ...ended, version: 1 });
    expect(await store.list()).toEqual([ended.record, waiting.record]);
    expect(await store.list({ status: 'waiting' })).toEqual([waiting.record]);
    expect(await store.list({ tags: { customer: 'c1' } })).toEqual([ended.record]);
    expect(await store.statuses([waiting.record.runId, ended.record.runId])).toEqual([
      'waiting',
      'completed',
    ]);
    const counts = await countStoredRuns(store, {});
    expect(counts.total).toBe(2);
    expect(counts.byStatus).toMatchObject({ waiting: 1, completed: 1 });
    const feed = await store.readFeed(waiting.record.runId, 0, 10);
    const oldFeed = fixture.keys[`<prefix>:run:${waiting.record.runId}:feed`]!.value;
    expect(feed.events).toEqual(oldFeed);
    expect(feed.events.map((e) => (JSON.parse(e) as { type: string }).type)).toEqual([
      'run.started',
      'step.started',
      'step.ended',
      'step.started',
      'run.waiting',
    ]);
  });

  it('writes a run in the body’s layout at its next save, leaving nothing of the old one', async () => {
    await restore();
    const store = storeFor();
    const id = waiting.record.runId;
    const run = (await store.load(id))!;
    run.counters = { ...run.counters, transitions: run.counters.transitions + 1 };
    expect(await store.saveVersioned(run)).toBe(2);
    const hash = await t.redis.hgetall(store.runKey(id));
    for (const old of ['record', 'snapshot', 'meta', 'counters', 'children', 'textkey'])
      expect(hash, old).not.toHaveProperty(old);
    expect(Object.keys(hash).filter((f) => f.startsWith('step:'))).toEqual([]);
    expect(hash.texthash).toBe(waiting.source.hash);
    expect(await t.redis.exists(store.bodyKey(id))).toBe(1);
    // A waiting run needs no note of its directive or text beside its hash.
    expect(await t.redis.hexists(`${t.prefix}:runs:directive-of`, id)).toBe(0);
    expect(await t.redis.hexists(`${t.prefix}:runs:text-of`, id)).toBe(0);
    expect(await storeFor({}, t.connect()).load(id)).toEqual({ ...run, version: 2 });
    expect(await store.list({ status: 'waiting' })).toEqual([run.record]);
    // Its feed goes on from the old events.
    expect((await store.readFeed(id, 0, 10)).last).toBe(5);
  });

  it('resumes a run waiting since before the body to its end, and forgets both runs whole', async () => {
    await restore();
    const store = storeFor();
    const done = await engineWith(store).signal(waiting.record.runId, 'ask', 'yes');
    expect(done.status).toBe('completed');
    expect(done.outputs).toEqual({ text: 'answer: yes' });
    expect((await storeFor({}, t.connect()).load(done.runId))?.record).toEqual(done);
    // The text is kept while a run of it is stored, those stored before as those after, then
    // goes with the last one.
    const again = { ...waiting, record: { ...waiting.record, runId: 'again-1' } };
    await store.save(again);
    const key = textKey(t.prefix, waiting.source.hash!);
    expect(await store.delete(waiting.record.runId)).toBe(true);
    expect(await t.redis.get(key)).toBe(waiting.source.text);
    expect(await store.delete(again.record.runId)).toBe(true);
    expect(await store.delete(ended.record.runId)).toBe(true);
    expect(await t.redis.keys(`${t.prefix}:*`)).toEqual([]);
  });
});

describe('Redis connection helpers', () => {
  it('picks --redis, else REDIS_URL, else nothing', () => {
    expect(redisUrl('redis://a:1', { REDIS_URL: 'redis://b:2' })).toBe('redis://a:1');
    expect(redisUrl(undefined, { REDIS_URL: 'redis://b:2' })).toBe('redis://b:2');
    expect(redisUrl(undefined, {})).toBeUndefined();
    expect(redisUrl('', { REDIS_URL: '' })).toBeUndefined();
  });

  it('pings a Redis that answers, and one that does not, quickly', async () => {
    expect(await pingRedis(t.url, 2000)).toBe(true);
    const started = Date.now();
    expect(await pingRedis('redis://127.0.0.1:1', 500)).toBe(false);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('says what to do, without printing a password', () => {
    expect(redisDownMessage('redis://:secret@db:6379/0')).toBe(
      'Redis at redis://:***@db:6379/0 does not answer; start redis-server or set REDIS_URL.',
    );
    expect(printableRedisUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
  });
});
