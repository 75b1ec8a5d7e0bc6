/**
 * The HTTP API's operations on runs: redrive, rerun from a step, bulk actions by filter, and
 * pausing and resuming; each answers its record or report, and a user's mistake gets its code.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiClient, apiServers } from '../support/api-server.js';
import { writeDirective } from '../support/directive-file.js';

const servers = apiServers();

/** Every error has this shape. */
function expectError(res: { status: number; body: unknown }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect((res.body as { error: { code: string } }).error.code).toBe(code);
}

describe('operating runs over HTTP (embedded)', { timeout: 30_000 }, () => {
  async function open() {
    const project = servers.project();
    writeDirective(
      join(project, '.ai', 'directives'),
      'flaky',
      `<inputs><input name="who" type="string" default="ada"/></inputs>
      <process>
        <step name="hello"><render>hi \${inputs.who}</render></step>
        <step name="gate"><retry attempts="1"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="test -f open"/></execute></step>
        <step name="bye"><render>bye \${inputs.who} after \${steps.hello.result}</render></step>
      </process>
      <outputs><output name="said" value="\${steps.bye.result}"/></outputs>`,
    );
    const { url } = await servers.listen({ project });
    return { api: apiClient(url), project };
  }

  it('redrives a failed run and reruns it from a step with edited inputs', async () => {
    const { api, project } = await open();
    const failed = await api.post('/v1/runs?wait=10', { directive: 'flaky' });
    expect(failed.body.status).toBe('failed');
    const runId = failed.body.runId as string;
    writeFileSync(join(project, 'open'), '');
    const redriven = await api.post(`/v1/runs/${runId}/redrive`, { by: 'ops:ada' });
    expect(redriven.status, JSON.stringify(redriven.body)).toBe(200);
    expect(redriven.body).toMatchObject({
      runId,
      status: 'completed',
      outputs: { said: 'bye ada after hi ada' },
      redrives: [{ by: 'ops:ada', steps: ['gate'], status: 'failed' }],
    });
    expectError(await api.post(`/v1/runs/${runId}/redrive`), 409, 'RUN_NOT_REDRIVABLE');

    const rerun = await api.post(`/v1/runs/${runId}/rerun?wait=10`, {
      from: 'bye',
      inputs: { who: 'bo' },
    });
    expect(rerun.status, JSON.stringify(rerun.body)).toBe(201);
    expect(rerun.headers.get('location')).toBe(`/v1/runs/${rerun.body.runId}`);
    expect(rerun.body).toMatchObject({
      status: 'completed',
      rerunOf: { runId, step: 'bye' },
      outputs: { said: 'bye bo after hi ada' },
    });
    const reruns = await api.get(`/v1/runs?tag=dirigent.rerun-of:${runId}`);
    expect(reruns.body.runs.map((r: { runId: string }) => r.runId)).toEqual([rerun.body.runId]);
    expectError(
      await api.post(`/v1/runs/${runId}/rerun`, { from: 'nope' }),
      400,
      'INVALID_REQUEST',
    );
    expectError(
      await api.post(`/v1/runs/${runId}/rerun`, { inputs: { who: 3 } }),
      422,
      'INVALID_INPUTS',
    );
  });

  it('counts a bulk action dry, then acts, and pauses and resumes a directive', async () => {
    const { api, project } = await open();
    for (let i = 0; i < 3; i++) await api.post('/v1/runs?wait=10', { directive: 'flaky' });
    const dry = await api.post('/v1/runs/bulk', {
      action: 'redrive',
      filter: { status: 'failed', directive: 'flaky' },
      dryRun: true,
    });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body).toMatchObject({ dryRun: true, matched: 3, acted: 0 });
    expect(dry.body.sample).toHaveLength(3);
    writeFileSync(join(project, 'open'), '');
    const done = await api.post('/v1/runs/bulk', {
      action: 'redrive',
      filter: { status: 'failed' },
    });
    expect(done.body).toMatchObject({ matched: 3, acted: 3, skipped: 0, failed: 0 });
    expectError(await api.post('/v1/runs/bulk', { action: 'explode' }), 400, 'INVALID_REQUEST');

    expect((await api.post('/v1/pause', { directive: 'flaky' })).body).toEqual({
      all: false,
      directives: ['flaky'],
    });
    expect((await api.get('/v1/pauses')).body).toEqual({ all: false, directives: ['flaky'] });
    const held = await api.post('/v1/runs?wait=10', { directive: 'flaky' });
    expect(held.body.status).toBe('paused');
    const resumed = await api.post('/v1/directives/flaky/resume');
    expect(resumed.body).toEqual({ paused: { all: false, directives: [] }, resumed: 1 });
    expect((await api.get(`/v1/runs/${held.body.runId}`)).body.status).toBe('completed');
    expectError(await api.post('/v1/pause', {}), 400, 'INVALID_REQUEST');
    expectError(await api.post('/v1/pause', { directive: 'nope' }), 404, 'UNKNOWN_DIRECTIVE');
    expectError(
      await api.post('/v1/runs', { directive: 'flaky', priority: 11 }),
      400,
      'INVALID_REQUEST',
    );
  });
});
