/**
 * The HTTP API's handling of requests, over real HTTP against a server in this process, embedded
 * (no Redis): authentication, the one error shape and its statuses, schema violations with
 * their paths, body limits, rate limits, and runs of an embedded server.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiClient, apiServers, limitProject, TOKEN } from '../support/api-server.js';
import { writeDirective } from '../support/directive-file.js';
import { waitFor } from '../support/wait-for.js';

const servers = apiServers();

/** Every error has this shape and nothing else. */
function expectError(res: { status: number; body: unknown }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  const body = res.body as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  for (const key of Object.keys(body.error))
    expect(['code', 'message', 'hint', 'details']).toContain(key);
  expect(JSON.stringify(body)).not.toMatch(/\n\s+at /);
}

describe('authentication', () => {
  it('refuses a request without a token, or with a wrong one, with 401 and WWW-Authenticate', async () => {
    const { url } = await servers.listen({ project: servers.project() });
    const none = await apiClient(url, null).get('/v1/runs');
    expectError(none, 401, 'UNAUTHORIZED');
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const wrong = await apiClient(url, 'not-the-token-0123456789').get('/v1/runs');
    expectError(wrong, 401, 'UNAUTHORIZED');
    const other = await apiClient(url).get('/v1/runs', { authorization: `Basic ${TOKEN}` });
    expectError(other, 401, 'UNAUTHORIZED');
    // A body is not read before the token is checked: not even a malformed one.
    const malformed = await apiClient(url, null).post('/v1/runs', '{"directive":');
    expectError(malformed, 401, 'UNAUTHORIZED');
    // Unknown routes do not tell who is not authenticated that they do not exist.
    expectError(await apiClient(url, null).get('/v1/nothing'), 401, 'UNAUTHORIZED');
    expect((await apiClient(url).get('/v1/runs')).status).toBe(200);
  });

  it('accepts any configured token, and leaves the probes and the OpenAPI document public', async () => {
    const { url } = await servers.listen(
      { project: servers.project() },
      { tokens: ['first-token-0123456789', 'second-token-0123456789'] },
    );
    expect((await apiClient(url, 'first-token-0123456789').get('/v1/directives')).status).toBe(200);
    expect((await apiClient(url, 'second-token-0123456789').get('/v1/directives')).status).toBe(
      200,
    );
    const anonymous = apiClient(url, null);
    expect((await anonymous.get('/healthz')).body).toEqual({ ok: true });
    expect((await anonymous.get('/readyz')).body).toMatchObject({ ready: true, mode: 'embedded' });
    expect((await anonymous.get('/openapi.json')).body.openapi).toBe('3.0.3');
  });

  it('serves anyone with authentication off', async () => {
    const { url } = await servers.listen({ project: servers.project() }, { tokens: false });
    const res = await apiClient(url, null).post('/v1/runs?wait=10', {
      directive: 'hello',
      inputs: { who: 'anyone' },
    });
    expect(res.status).toBe(201);
    expect(res.body.outputs).toEqual({ said: 'Hello anyone' });
  });
});

describe('errors', () => {
  it('answers malformed JSON, a non-JSON body and schema violations with 400/415 and the failing paths', async () => {
    const { url } = await servers.listen({ project: servers.project() });
    const api = apiClient(url);
    expectError(await api.post('/v1/runs', '{"directive": "hello",'), 400, 'INVALID_REQUEST');
    expectError(await api.post('/v1/runs', ''), 400, 'INVALID_REQUEST');
    expectError(
      await api.post('/v1/runs', 'directive=hello', { 'content-type': 'text/plain' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    const bad = await api.post('/v1/runs', { directive: 5, inputs: [], extra: true });
    expectError(bad, 400, 'INVALID_REQUEST');
    const paths = (bad.body.error.details.problems as { path: string }[]).map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining(['body/directive', 'body/inputs', 'body/extra']));
    const missing = await api.post('/v1/runs', {});
    expectError(missing, 400, 'INVALID_REQUEST');
    expect(missing.body.error.details.problems).toEqual([
      { path: 'body/directive', message: 'is required' },
    ]);
    const wait = await api.post('/v1/runs?wait=61', { directive: 'hello' });
    expectError(wait, 400, 'INVALID_REQUEST');
    expect(wait.body.error.details.problems[0].path).toBe('query/wait');
    const reuse = await api.post('/v1/runs', {
      directive: 'hello',
      idempotencyKey: 'r-1',
      reuse: 'always',
    });
    expectError(reuse, 400, 'INVALID_REQUEST');
    expect(reuse.body.error.details.problems[0].path).toBe('body/reuse');
    expectError(
      await api.post('/v1/runs', { directive: 'hello', inputs: { who: 'x' }, reuse: 'failed' }),
      400,
      'INVALID_REQUEST',
    );
    expectError(await api.get('/v1/runs?limit=0'), 400, 'INVALID_REQUEST');
    expectError(await api.get('/v1/runs?since=yesterday'), 400, 'INVALID_REQUEST');
    expectError(await api.get('/v1/runs?cursor=bm90LWEtY3Vyc29y'), 400, 'INVALID_REQUEST');
    expectError(await api.get('/v1/runs/..%2F..%2Fetc'), 400, 'INVALID_REQUEST');
    expectError(await api.post('/v1/runs', { directive: '../../x' }), 400, 'INVALID_ITEM_ID');
    expectError(
      await api.post(
        '/v1/runs',
        { directive: 'hello', idempotencyKey: 'a' },
        { 'idempotency-key': 'b' },
      ),
      400,
      'INVALID_REQUEST',
    );
  });

  it('answers what does not exist with 404', async () => {
    const { url } = await servers.listen({ project: servers.project() });
    const api = apiClient(url);
    expectError(await api.post('/v1/runs', { directive: 'nope' }), 404, 'UNKNOWN_DIRECTIVE');
    expectError(
      await api.get('/v1/runs/0b6ad9a6-7c4f-4c4e-9b0e-000000000000'),
      404,
      'RUN_NOT_FOUND',
    );
    expectError(
      await api.post('/v1/runs/0b6ad9a6-7c4f-4c4e-9b0e-000000000000/cancel'),
      404,
      'RUN_NOT_FOUND',
    );
    expectError(
      await api.get('/v1/runs/0b6ad9a6-7c4f-4c4e-9b0e-000000000000/events'),
      404,
      'RUN_NOT_FOUND',
    );
    expectError(await api.get('/v1/nothing'), 404, 'NOT_FOUND');
    expectError(await api.call('DELETE', '/v1/runs'), 404, 'NOT_FOUND');
    expectError(
      await api.post('/v1/directives/validate', { directive: 'nope' }),
      404,
      'UNKNOWN_DIRECTIVE',
    );
  });

  it('lists every problem with the inputs (422) and refuses a directive that does not parse (422)', async () => {
    const project = servers.project();
    const { url } = await servers.listen({ project });
    const api = apiClient(url);
    const res = await api.post('/v1/runs', {
      directive: 'typed',
      inputs: { count: 'many', flag: 'perhaps', colour: 'red' },
    });
    expectError(res, 422, 'INVALID_INPUTS');
    const problems = res.body.error.details.problems as string[];
    expect(problems.join('\n')).toMatch(/count/);
    expect(problems.join('\n')).toMatch(/"name"/);
    expect(problems.join('\n')).toMatch(/flag/);
    expect(problems.join('\n')).toMatch(/colour/);
    expect(problems.length).toBeGreaterThanOrEqual(4);
    expect((await api.get('/v1/runs')).body.runs).toEqual([]);

    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      join(project, '.ai', 'directives', 'broken.md'),
      '# broken\n\n```xml\n<directive name="broken"\n```\n',
    );
    const broken = await api.post('/v1/runs', { directive: 'broken' });
    expect(broken.status).toBe(422);
    const checked = await api.post('/v1/directives/validate', { directive: 'broken' });
    expect(checked.status).toBe(200);
    expect(checked.body.valid).toBe(false);
    expect(checked.body.errors[0].code).toBe(broken.body.error.code);
  });

  it('answers an oversized body with 413 PAYLOAD_TOO_LARGE and oversized inputs with 413 INPUT_TOO_LARGE', async () => {
    const project = servers.project();
    limitProject(project, { inputs_bytes: 2000, payload_bytes: 2000 });
    const { url } = await servers.listen({ project });
    const api = apiClient(url);
    const huge = await api.post('/v1/runs', {
      directive: 'hello',
      inputs: { who: 'x'.repeat(200_000) },
    });
    expectError(huge, 413, 'PAYLOAD_TOO_LARGE');
    const large = await api.post('/v1/runs', {
      directive: 'hello',
      inputs: { who: 'x'.repeat(5000) },
    });
    expectError(large, 413, 'INPUT_TOO_LARGE');
    const fine = await api.post('/v1/runs?wait=10', {
      directive: 'hello',
      inputs: { who: 'x'.repeat(500) },
    });
    expect(fine.status).toBe(201);
  });

  it('takes a smaller body limit when one is given', async () => {
    const { url } = await servers.listen({ project: servers.project() }, { bodyLimit: 100 });
    const res = await apiClient(url).post('/v1/runs', {
      directive: 'hello',
      inputs: { who: 'x'.repeat(200) },
    });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
  });
});

describe('rate limits', () => {
  it('limits each token on its own, with 429 RATE_LIMITED and Retry-After, and never the probes', async () => {
    const other = 'other-token-0123456789abcdef';
    const { url } = await servers.listen(
      { project: servers.project() },
      { tokens: [TOKEN, other], rateLimit: 3 },
    );
    const api = apiClient(url);
    for (let i = 0; i < 3; i++) expect((await api.get('/v1/directives')).status).toBe(200);
    const limited = await api.get('/v1/directives');
    expectError(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await apiClient(url, other).get('/v1/directives')).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await api.get('/healthz')).status).toBe(200);
  });

  it('limits by client address when authentication is off', async () => {
    const { url } = await servers.listen(
      { project: servers.project() },
      { tokens: false, rateLimit: 2 },
    );
    const api = apiClient(url, null);
    await api.get('/v1/runs');
    await api.get('/v1/runs');
    expectError(await api.get('/v1/runs'), 429, 'RATE_LIMITED');
  });
});

describe('embedded runs', () => {
  it('tags runs from the body and lists them by ?tag=name:value, every one given', async () => {
    const { url } = await servers.listen({ project: servers.project() });
    const api = apiClient(url);
    const start = async (who: string, tags: Record<string, string>) => {
      const res = await api.post('/v1/runs?wait=10', { directive: 'hello', inputs: { who }, tags });
      expect(res.status).toBe(201);
      expect(res.body.tags).toEqual(tags);
      return res.body.runId as string;
    };
    const a = await start('a', { customer: 'c7', region: 'eu' });
    await start('b', { customer: 'c8' });
    const listed = async (query: string) =>
      (await api.get(`/v1/runs?${query}`)).body.runs.map((r: { runId: string }) => r.runId);
    const one = await api.get('/v1/runs?tag=customer:c7');
    expect(one.status, JSON.stringify(one.body)).toBe(200);
    expect(await listed('tag=customer:c7')).toEqual([a]);
    expect(await listed('tag=customer:c7&tag=region:eu')).toEqual([a]);
    expect(await listed('tag=customer:c7&tag=region:us')).toEqual([]);
    expectError(await api.get('/v1/runs?tag=customer'), 400, 'INVALID_REQUEST');
    expectError(
      await api.post('/v1/runs', { directive: 'hello', inputs: { who: 'x' }, tags: { '9': 'x' } }),
      400,
      'INVALID_REQUEST',
    );
  });

  it('runs, lists, signals and cancels runs with no Redis', async () => {
    const project = servers.project();
    const { url, dirigent } = await servers.listen({ project });
    expect(dirigent.mode).toBe('embedded');
    const api = apiClient(url);
    const done = await api.post('/v1/runs?wait=10', { directive: 'hello', inputs: { who: 'Ada' } });
    expect(done.status).toBe(201);
    expect(done.body).toMatchObject({ status: 'completed', outputs: { said: 'Hello Ada' } });
    expect(done.headers.get('location')).toBe(`/v1/runs/${done.body.runId}`);

    const gate = await api.post('/v1/runs?wait=10', { directive: 'gate' });
    expect(gate.body.status).toBe('waiting');
    expect(gate.body.waiting).toEqual([expect.objectContaining({ step: 'hold', signal: 'go' })]);
    expectError(
      await api.post(`/v1/runs/${gate.body.runId}/signals/nope`, { payload: 1 }),
      409,
      'UNKNOWN_SIGNAL',
    );
    const signalled = await api.post(`/v1/runs/${gate.body.runId}/signals/go`, {
      payload: { ok: 1 },
    });
    expect(signalled.status).toBe(200);
    expect(signalled.body).toMatchObject({ status: 'completed', outputs: { got: { ok: 1 } } });
    expectError(
      await api.post(`/v1/runs/${gate.body.runId}/signals/go`, { payload: 2 }),
      409,
      'RUN_NOT_WAITING',
    );

    const slow = await api.post('/v1/runs?wait=0.2', { directive: 'slow' });
    expect(slow.status).toBe(202);
    expect(slow.body).toEqual({ runId: expect.any(String), status: 'running', created: true });
    const cancelled = await api.post(`/v1/runs/${slow.body.runId}/cancel`, { reason: 'enough' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');

    const list = await api.get('/v1/runs?limit=10');
    expect(list.body.runs.map((r: { runId: string }) => r.runId)).toEqual([
      slow.body.runId,
      gate.body.runId,
      done.body.runId,
    ]);
  });

  it('starts one run for one idempotency key, however many requests race', async () => {
    const project = servers.project();
    const { url } = await servers.listen({ project });
    const api = apiClient(url);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        api.post(
          '/v1/runs',
          { directive: 'count', inputs: { order: 'o-1' } },
          { 'idempotency-key': 'order-1' },
        ),
      ),
    );
    const ids = new Set(answers.map((a) => a.body.runId));
    expect(ids.size).toBe(1);
    expect(answers.map((a) => a.status).sort((a, b) => a - b)).toEqual([
      ...Array(19).fill(200),
      201,
    ]);
    const [runId] = [...ids];
    const done = await api.post(`/v1/runs?wait=10`, {
      directive: 'count',
      inputs: { order: 'o-1' },
      idempotencyKey: 'order-1',
    });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ runId, status: 'completed' });
    expect(readFileSync(join(project, 'side-effects.log'), 'utf8')).toBe('ran\n');
    // A completed run is never started again, even with reuse "failed".
    const reused = await api.post('/v1/runs', {
      directive: 'count',
      inputs: { order: 'o-1' },
      idempotencyKey: 'order-1',
      reuse: 'failed',
    });
    expect(reused.status).toBe(200);
    expect(reused.body.runId).toBe(runId);
    const conflict = await api.post(
      '/v1/runs',
      { directive: 'count', inputs: { order: 'o-2' } },
      { 'idempotency-key': 'order-1' },
    );
    expectError(conflict, 409, 'IDEMPOTENCY_CONFLICT');
  });
});

describe('events', () => {
  it('starts each subscribed directive once per event id, and refuses a bad event', async () => {
    const project = servers.project();
    writeDirective(
      join(project, '.ai', 'directives'),
      'on_order',
      `<metadata><on event="order.created"/></metadata>
      <inputs><input name="event" type="object"/></inputs>
      <process><step name="say"><render>order \${inputs.event.id}</render></step></process>`,
    );
    const { url } = await servers.listen({ project });
    const api = apiClient(url);
    const first = await api.post('/v1/events', {
      name: 'order.created',
      id: 'e-1',
      payload: { id: 9 },
    });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const [run] = (first.body as { runs: { directive: string; runId: string; created: boolean }[] })
      .runs;
    expect(run).toMatchObject({ directive: 'on_order', created: true });
    const again = await api.post('/v1/events', {
      name: 'order.created',
      id: 'e-1',
      payload: { id: 9 },
    });
    expect((again.body as { runs: unknown[] }).runs).toEqual([{ ...run, created: false }]);
    const record = await api.get(`/v1/runs/${run!.runId}?wait=10`);
    expect(record.body).toMatchObject({ runId: run!.runId });
    expectError(await api.post('/v1/events', { name: 'no spaces' }), 400, 'INVALID_REQUEST');
    expectError(await api.post('/v1/events', { name: 'x', payload: [1] }), 400, 'INVALID_REQUEST');
  });
});

describe('batches', () => {
  it('runs a batch in the server, tells how it stands and streams its results; the same body names the same batch', async () => {
    const { url } = await servers.listen({ project: servers.project() });
    const api = apiClient(url);
    const body = { directive: 'hello', inputs: [{ who: 'a' }, { who: 'b' }, { nobody: 1 }] };
    const started = await api.post('/v1/batches', body);
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const { batchId } = started.body as { batchId: string };
    type BatchStatus = { state: string; results: { done: number; failed: number } };
    let status: BatchStatus | undefined;
    await waitFor(
      async () => {
        status = (await api.get(`/v1/batches/${batchId}`)).body as BatchStatus;
        return status.state === 'finished';
      },
      { what: 'the batch to finish', timeoutMs: 5000, intervalMs: 50 },
    ).catch(() => undefined); // the assertion below shows where it stands
    expect(status).toMatchObject({ state: 'finished', results: { done: 3, failed: 1 } });
    const res = await fetch(`${url}/v1/batches/${batchId}/results`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { line: number; status: string; outputs?: unknown });
    expect(lines.map((l) => [l.line, l.status])).toEqual([
      [1, 'completed'],
      [2, 'completed'],
      [3, 'invalid'],
    ]);
    expect(lines[1]!.outputs).toEqual({ said: 'Hello b' });
    const again = await api.post('/v1/batches', body);
    expect((again.body as { batchId: string }).batchId).toBe(batchId);
    expectError(await api.get('/v1/batches/nope'), 404, 'UNKNOWN_BATCH');
    expectError(
      await api.post('/v1/batches', { directive: 'nope', inputs: [{}] }),
      404,
      'UNKNOWN_DIRECTIVE',
    );
  });
});
