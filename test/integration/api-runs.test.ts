/**
 * The HTTP API on a Redis deployment: a server in this process, real `dirigent worker`
 * processes serving the same project, real Redis (a key prefix per test). Starting with and
 * without `?wait`, idempotent retries that race, reading, listing with cursors, cancelling,
 * signalling, and readiness.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiClient, apiServers } from '../support/api-server.js';
import { dirigentProcesses, until } from '../support/dirigent-processes.js';
import { redisForTest } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';

const redis = redisForTest();
const processes = dirigentProcesses();
const servers = apiServers();

const env = () => ({ ...process.env, REDIS_URL: redis.url, DIRIGENT_PREFIX: redis.prefix });

/** A project, a worker serving it, and an API server on the same deployment. */
async function deployment() {
  const project = servers.project();
  await processes.worker(env(), '--project', project);
  const api = await servers.listen({ project, redis: redis.url, prefix: redis.prefix });
  return { project, api, client: apiClient(api.url) };
}

describe('runs on Redis workers', { timeout: 60_000 }, () => {
  it('answers ?wait with the completed record of a short run, and 202 for a slow one', async () => {
    const { client } = await deployment();
    const done = await client.post('/v1/runs?wait=20', {
      directive: 'hello',
      inputs: { who: 'Ada' },
    });
    expect(done.status).toBe(201);
    expect(done.body).toMatchObject({
      directive: 'hello',
      status: 'completed',
      outputs: { said: 'Hello Ada' },
      steps: [expect.objectContaining({ name: 'greet', status: 'completed' })],
      error: null,
    });
    expect(done.headers.get('location')).toBe(`/v1/runs/${done.body.runId}`);

    const started = Date.now();
    const slow = await client.post('/v1/runs?wait=1', { directive: 'slow', inputs: { ms: 4000 } });
    expect(slow.status).toBe(202);
    expect(Date.now() - started).toBeLessThan(3500);
    expect(slow.body).toEqual({
      runId: expect.any(String),
      status: expect.stringMatching(/^(queued|running)$/),
      created: true,
    });
    const later = await client.get(`/v1/runs/${slow.body.runId}`);
    expect(later.status).toBe(200);
    expect(['queued', 'running']).toContain(later.body.status);
  });

  it('starts without waiting: 201 with the record as it stands, and the run goes on', async () => {
    const { client } = await deployment();
    const res = await client.post('/v1/runs', { directive: 'hello', inputs: { who: 'Bo' } });
    expect(res.status).toBe(201);
    expect(res.body.runId).toMatch(/^[0-9a-f-]{36}$/);
    await until(
      async () => (await client.get(`/v1/runs/${res.body.runId}`)).body.status === 'completed',
      15_000,
      'the run to complete',
    );
  });

  it('starts exactly one run for 20 concurrent requests with one idempotency key', async () => {
    const { project, client } = await deployment();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        client.post(
          '/v1/runs',
          { directive: 'count', inputs: { order: 'A-17' } },
          { 'idempotency-key': 'order-A-17' },
        ),
      ),
    );
    const ids = new Set(answers.map((a) => a.body.runId));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(19);
    const [runId] = [...ids] as string[];
    const record = await client.post('/v1/runs?wait=20', {
      directive: 'count',
      inputs: { order: 'A-17' },
      idempotencyKey: 'order-A-17',
    });
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({ runId, status: 'completed' });
    expect(readFileSync(join(project, 'side-effects.log'), 'utf8')).toBe('ran\n');
    const runs = await client.get('/v1/runs?directive=count');
    expect(runs.body.runs.map((r: { runId: string }) => r.runId)).toEqual([runId]);
    const conflict = await client.post(
      '/v1/runs',
      { directive: 'count', inputs: { order: 'B-1' } },
      { 'idempotency-key': 'order-A-17' },
    );
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('IDEMPOTENCY_CONFLICT');
  });

  it('lists runs newest first, a page at a time, with filters', async () => {
    const { client } = await deployment();
    const ids: string[] = [];
    for (const who of ['a', 'b', 'c', 'd', 'e']) {
      const res = await client.post('/v1/runs?wait=20', { directive: 'hello', inputs: { who } });
      expect(res.body.status).toBe('completed');
      ids.push(res.body.runId);
      // The next run starts in a later millisecond: the list orders runs by their start.
      const startedBy = Date.now();
      await waitFor(() => Date.now() > startedBy, { what: 'the next millisecond' });
    }
    const gate = await client.post('/v1/runs?wait=20', { directive: 'gate' });
    expect(gate.body.status).toBe('waiting');
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.get(
        `/v1/runs?directive=hello&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(page.status).toBe(200);
      expect(page.body.runs.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.runs.map((r: { runId: string }) => r.runId));
      cursor = page.body.next;
      pages++;
    } while (cursor !== undefined);
    expect(seen).toEqual([...ids].reverse());
    expect(pages).toBe(3);
    const waiting = await client.get('/v1/runs?status=waiting');
    expect(waiting.body.runs.map((r: { runId: string }) => r.runId)).toEqual([gate.body.runId]);
    const first = (await client.get(`/v1/runs/${ids[0]}`)).body.startedAt as number;
    const since = await client.get(`/v1/runs?directive=hello&since=${first + 1}`);
    expect(since.body.runs).toHaveLength(4);
    const until_ = await client.get(
      `/v1/runs?directive=hello&until=${encodeURIComponent(new Date(first).toISOString())}`,
    );
    expect(until_.body.runs.map((r: { runId: string }) => r.runId)).toEqual([ids[0]]);
  });

  it('signals a waiting run and answers when it ends, or with 202 when ?wait is shorter', async () => {
    const { client } = await deployment();
    const gate = await client.post('/v1/runs?wait=20', { directive: 'gate' });
    expect(gate.body).toMatchObject({
      status: 'waiting',
      waiting: [expect.objectContaining({ step: 'hold', signal: 'go' })],
    });
    const runId = gate.body.runId as string;
    const unknown = await client.post(`/v1/runs/${runId}/signals/stop`, { payload: 1 });
    expect(unknown.status).toBe(409);
    expect(unknown.body.error.code).toBe('UNKNOWN_SIGNAL');
    const done = await client.post(`/v1/runs/${runId}/signals/go`, { payload: { by: 'ops' } });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'completed', outputs: { got: { by: 'ops' } } });
    const again = await client.post(`/v1/runs/${runId}/signals/go`, { payload: 1 });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('RUN_NOT_WAITING');

    const second = await client.post('/v1/runs?wait=20', { directive: 'gate' });
    const quick = await client.post(`/v1/runs/${second.body.runId}/signals/go?wait=0.1`);
    expect(quick.status).toBe(202);
    expect(quick.body.runId).toBe(second.body.runId);
    await until(
      async () => (await client.get(`/v1/runs/${second.body.runId}`)).body.status === 'completed',
      15_000,
      'the signalled run to complete',
    );
  });

  it('cancels a running run', async () => {
    const { client } = await deployment();
    const slow = await client.post('/v1/runs?wait=0.5', {
      directive: 'slow',
      inputs: { ms: 20000 },
    });
    expect(slow.status).toBe(202);
    const cancelled = await client.post(`/v1/runs/${slow.body.runId}/cancel`, {
      reason: 'no need',
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    expect((await client.get(`/v1/runs/${slow.body.runId}`)).body.status).toBe('cancelled');
  });

  it('answers 409 RUN_ENDED, with the status, to a cancel of a run that has ended', async () => {
    const { client } = await deployment();
    const done = await client.post('/v1/runs?wait=20', {
      directive: 'hello',
      inputs: { who: 'Al' },
    });
    expect(done.body.status).toBe('completed');
    // Again and again: a cancel job done before its wait looks is read from the store.
    for (let i = 0; i < 3; i++) {
      const refused = await client.post(`/v1/runs/${done.body.runId}/cancel`, {});
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatchObject({
        code: 'RUN_ENDED',
        details: { status: 'completed' },
      });
    }
    expect((await client.get(`/v1/runs/${done.body.runId}`)).body.status).toBe('completed');
  });

  it('is not ready (503) while no worker takes runs, and ready once one does', async () => {
    const project = servers.project();
    const api = await servers.listen({ project, redis: redis.url, prefix: redis.prefix });
    const client = apiClient(api.url, null);
    const before = await client.get('/readyz');
    expect(before.status).toBe(503);
    expect(before.body.error).toMatchObject({ code: 'NOT_READY', details: { mode: 'redis' } });
    expect((await client.get('/healthz')).status).toBe(200);
    await processes.worker(env(), '--project', project);
    const after = await client.get('/readyz');
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ ready: true, mode: 'redis' });
  });
});
