/**
 * Who drives a run on Redis: a worker claims a run before driving it, its writes are fenced by
 * that claim, and a claim is refused while another worker's lease is live (see
 * `redis/takeover/run-claims.ts`; the leases themselves: `worker-lease.test.ts`).
 */
import { describe, expect, it } from 'vitest';
import type { RunStatus } from '../../src/engine/run-record.js';
import type { StoredRun } from '../../src/engine/run-store.js';
import { ErrorCode } from '../../src/errors/error-codes.js';
import { RedisRunStore } from '../../src/redis/run-store/redis-run-store.js';
import { workersKey } from '../../src/redis/takeover/worker-lease.js';
import { redisForTest } from '../support/redis.js';
import { DirigentError } from '../../src/errors/dirigent-error.js';

const t = redisForTest();

/** The DirigentError a promise rejects with. */
async function thrown(work: () => Promise<unknown>): Promise<DirigentError> {
  const err: unknown = await work().then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
  if (err instanceof DirigentError) return err;
  throw err;
}

/** A fenced store: the store of the worker whose lease is `owner`. */
const workerStore = (owner: string) => new RedisRunStore(t.redis, { prefix: t.prefix, owner });

/** Gives `name` a lease that lapses in `ms` (negative: lapsed already). */
const lease = (name: string, ms: number) =>
  t.redis.zadd(workersKey(t.prefix), Date.now() + ms, name);

let ids = 0;
function runOf(status: RunStatus = 'running'): StoredRun {
  const runId = `claimed-${++ids}`;
  return {
    record: {
      runId,
      directive: 'demo',
      version: '1.0.0',
      status,
      inputs: {},
      outputs: null,
      steps: [],
      error: null,
      startedAt: Date.now(),
      endedAt: null,
    } as unknown as StoredRun['record'],
    snapshot: { value: 'a' },
    source: { file: 'demo.md', text: '<directive/>' },
    projectDir: '/p',
    depth: 0,
    parentRunId: null,
    children: {},
    steps: {},
    counters: { entries: {}, spawns: 0 } as unknown as StoredRun['counters'],
  };
}

describe('run claims', () => {
  it('lets the worker that created a run write it, and no other worker until it lets go', async () => {
    const a = workerStore('runs/a');
    const b = workerStore('runs/b');
    await lease('runs/a', 60_000);
    const run = runOf();
    await a.save(run);
    await a.save(run); // its own writes go on
    expect(await b.claim(run.record.runId)).toEqual({ status: 'busy', owner: 'runs/a' });
    expect(await thrown(() => b.save(run))).toMatchObject({ code: ErrorCode.RUN_TAKEN_OVER });
    await a.release(run.record.runId);
    const claim = await b.claim(run.record.runId);
    expect(claim).toMatchObject({ status: 'claimed' });
    expect(claim.status === 'claimed' && claim.takenOverFrom).toBeFalsy();
    await b.save(run);
  });

  it("takes a run over once its owner's lease lapsed, and refuses every later write of the old owner", async () => {
    const a = workerStore('runs/a');
    const b = workerStore('runs/b');
    await lease('runs/a', 60_000);
    const run = runOf();
    await a.save(run);
    await lease('runs/a', -1); // a is paused, or cut off from Redis
    const claim = await b.claim(run.record.runId);
    expect(claim).toMatchObject({ status: 'claimed', takenOverFrom: 'runs/a' });
    const version = claim.status === 'claimed' ? claim.run.version : -1;
    // a comes back and writes as if nothing happened: refused, and nothing changes.
    run.record.status = 'failed';
    const err = await thrown(() => a.save(run));
    expect(err).toMatchObject({ code: ErrorCode.RUN_TAKEN_OVER });
    expect(err.message).toMatch(/taken over by worker runs\/b/);
    await lease('runs/a', 60_000); // renewed: still refused, the claim is b's
    expect(await thrown(() => a.saveSteps(run.record.runId, {}))).toMatchObject({
      code: ErrorCode.RUN_TAKEN_OVER,
    });
    const stored = await new RedisRunStore(t.redis, { prefix: t.prefix }).load(run.record.runId);
    expect(stored?.record.status).toBe('running');
    expect(stored?.version).toBe(version);
  });

  it('claims and reads in one go: the next load answers the claimed copy without a read', async () => {
    const a = workerStore('runs/a');
    const run = runOf();
    await a.save(run);
    await a.release(run.record.runId);
    const b = workerStore('runs/b');
    const claim = await b.claim(run.record.runId);
    expect(claim.status).toBe('claimed');
    await t.redis.hset(b.runKey(run.record.runId), 'record', '{}'); // a read would see this
    expect((await b.load(run.record.runId))?.record.directive).toBe('demo');
  });

  it('answers missing for a run that is not stored, and refuses a second creation', async () => {
    expect(await workerStore('runs/a').claim('nobody')).toEqual({ status: 'missing' });
    const run = runOf();
    await workerStore('runs/a').save(run);
    expect(await thrown(() => workerStore('runs/b').save(run))).toMatchObject({
      code: ErrorCode.RUN_TAKEN_OVER,
    });
  });

  it('clears the owner of an ended run, so that anyone reads or claims it at once', async () => {
    const a = workerStore('runs/a');
    await lease('runs/a', 60_000);
    const run = runOf();
    await a.save(run);
    run.record.status = 'completed';
    await a.save(run);
    expect(await t.redis.hget(a.runKey(run.record.runId), 'owner')).toBeNull();
    expect(await workerStore('runs/b').claim(run.record.runId)).toMatchObject({
      status: 'claimed',
    });
  });

  it('is not fenced without an owner: a store of a client writes as before', async () => {
    const client = new RedisRunStore(t.redis, { prefix: t.prefix });
    const run = runOf();
    await client.save(run);
    await client.save(run);
    expect(await workerStore('runs/a').claim(run.record.runId)).toMatchObject({
      status: 'claimed',
    });
  });
});
