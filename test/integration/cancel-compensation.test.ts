/**
 * Cancelling a saga, on every face but the CLI (test/e2e/cli-compensation.test.ts): a cancel runs
 * the compensations of the run's completed steps before the run ends `cancelled`, and
 * `compensate: false` ends it at once. The library (a run's handle and the operations), the HTTP
 * route (its body and its OpenAPI schema), embedded and on Redis, where the option travels to the
 * worker driving the run.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/engine/run-record.js';
import { Dirigent } from '../../src/operations/dirigent.js';
import { apiClient, apiServers } from '../support/api-server.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentProcesses } from '../support/dirigent-processes.js';
import { redisForTest } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';

const redis = redisForTest();
const processes = dirigentProcesses();
const servers = apiServers();

/**
 * A project holding `saga`: `reserve` (undone by a line in `undo.log`), then `hold`, which waits
 * for signal `go` or, with input `sleep`, runs a shell command for that many seconds.
 */
function sagaProject(): string {
  const project = servers.project();
  writeDirective(
    join(project, '.ai', 'directives'),
    'saga',
    `<inputs><input name="sleep" type="integer" default="0"/></inputs>
  <process>
    <step name="reserve">
      <execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo -n r1"/></execute>
      <compensate><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo undone \${result.stdout} >> undo.log"/></execute></compensate>
    </step>
    <step name="nap">
      <condition path="inputs.sleep" op="gt" value="0"/>
      <execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="sleep \${inputs.sleep}"/></execute>
    </step>
    <step name="hold"><condition path="inputs.sleep" op="eq" value="0"/><wait signal="go"/></step>
  </process>`,
  );
  return project;
}

const undone = (project: string) =>
  existsSync(join(project, 'undo.log'))
    ? readFileSync(join(project, 'undo.log'), 'utf8').trim().split('\n')
    : [];
const trace = (r: RunRecord) => r.steps.map((s) => `${s.name}:${s.status}`);

describe('cancelling a saga', { timeout: 60_000 }, () => {
  it("through the library: compensates by default; a handle's or the operations' cancel with compensate: false does not", async () => {
    const project = sagaProject();
    const dirigent = await Dirigent.open({ project });
    try {
      const plain = await dirigent.start({ directive: 'saga' });
      expect((await dirigent.wait(plain.runId)).status).toBe('waiting');
      const skipped = await plain.cancel('enough', { compensate: false });
      expect(skipped.status).toBe('cancelled');
      expect(trace(skipped)).toEqual(['reserve:completed', 'nap:skipped', 'hold:cancelled']);

      const other = await dirigent.start({ directive: 'saga' });
      await dirigent.wait(other.runId);
      expect(
        trace(await dirigent.cancel(other.runId, 'enough', { compensate: false })),
      ).not.toContain('compensate:reserve:completed');
      expect(undone(project)).toEqual([]);

      const saga = await dirigent.start({ directive: 'saga' });
      await dirigent.wait(saga.runId);
      const record = await dirigent.cancel(saga.runId, 'enough');
      expect(record).toMatchObject({ status: 'cancelled', error: { code: 'CANCELLED' } });
      expect(trace(record)).toEqual([
        'reserve:completed',
        'nap:skipped',
        'hold:cancelled',
        'compensate:reserve:completed',
      ]);
      expect(undone(project)).toEqual(['undone r1']);
    } finally {
      await dirigent.close();
    }
  });

  it('through POST /v1/runs/:runId/cancel: compensate: false in the body skips the compensations, and the OpenAPI document says so', async () => {
    const project = sagaProject();
    const { url } = await servers.listen({ project });
    const api = apiClient(url);
    const start = async () => {
      const res = await api.post('/v1/runs?wait=10', { directive: 'saga' });
      expect(res.body.status).toBe('waiting');
      return res.body.runId as string;
    };
    const skipped = await api.post(`/v1/runs/${await start()}/cancel`, { compensate: false });
    expect(skipped.status).toBe(200);
    expect(skipped.body.status).toBe('cancelled');
    expect(trace(skipped.body)).toEqual(['reserve:completed', 'nap:skipped', 'hold:cancelled']);
    expect(undone(project)).toEqual([]);

    const compensated = await api.post(`/v1/runs/${await start()}/cancel`, { reason: 'no' });
    expect(compensated.status).toBe(200);
    expect(trace(compensated.body)).toContain('compensate:reserve:completed');
    expect(undone(project)).toEqual(['undone r1']);

    const wrong = await api.post(`/v1/runs/${await start()}/cancel`, { compensate: 'no' });
    expect(wrong.status).toBe(400);

    const doc = (await apiClient(url, null).get('/openapi.json')).body;
    const body = doc.paths['/v1/runs/{runId}/cancel'].post.requestBody.content['application/json']
      .schema as { properties: Record<string, { type: string; default?: unknown }> };
    expect(body.properties.compensate).toMatchObject({ type: 'boolean', default: true });
  });

  it('on Redis: the option reaches the worker driving the run, which compensates or not', async () => {
    const project = sagaProject();
    await processes.worker(
      { ...process.env, REDIS_URL: redis.url, DIRIGENT_PREFIX: redis.prefix },
      '--project',
      project,
    );
    const dirigent = await Dirigent.open({ project, redis: redis.url, prefix: redis.prefix });
    try {
      // The run is under way on the worker (its shell sleeps) when the cancel comes.
      const driven = async () => {
        const handle = await dirigent.start({ directive: 'saga', inputs: { sleep: 20 } });
        await waitFor(
          async () => (await dirigent.get(handle.runId)).steps.some((s) => s.name === 'reserve'),
          { what: 'the first step' },
        );
        return handle;
      };
      const skipped = await (await driven()).cancel('stop', { compensate: false });
      expect(skipped.status).toBe('cancelled');
      expect(trace(skipped)).toEqual(['reserve:completed', 'nap:cancelled']);
      expect(undone(project)).toEqual([]);

      const record = await (await driven()).cancel('stop');
      expect(record.status).toBe('cancelled');
      expect(trace(record)).toEqual([
        'reserve:completed',
        'nap:cancelled',
        'compensate:reserve:completed',
      ]);
      expect(undone(project)).toEqual(['undone r1']);
    } finally {
      await dirigent.close();
    }
  });
});
