/**
 * Typed answers through the HTTP API, embedded and on Redis (workers in this process): a waiting
 * run's record says what its answer holds, a signal whose payload does not match is answered 422
 * `INVALID_PAYLOAD` with every problem, the run waits on unchanged, and a matching payload resumes
 * it.
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { apiClient, apiServers } from '../support/api-server.js';
import { writeDirective } from '../support/directive-file.js';
import { inProcessWorker } from '../support/in-process-worker.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();
const servers = apiServers();

for (const mode of ['embedded', 'redis'] as const) {
  describe(`typed answers over HTTP (${mode})`, { timeout: 30_000 }, () => {
    it('answers 422 INVALID_PAYLOAD with every problem, leaves the run waiting, then takes a matching answer', async () => {
      const project = servers.project();
      writeDirective(
        join(project, '.ai', 'directives'),
        'release',
        `<process>
    <step name="approve">
      <instruction>Ship it?<answer name="approved" type="boolean" required="true"/><answer name="days" type="integer">Days to wait</answer></instruction>
    </step>
    <step name="window"><wait signal="opens"><answer type="string">When the window opens</answer></wait></step>
  </process>
  <outputs><output name="approved" value="\${steps.approve.result.approved}"/><output name="opens" value="\${steps.window.result}"/></outputs>`,
      );
      if (mode === 'redis') {
        const worker = inProcessWorker(redis, { projectDir: project });
        try {
          await check(
            await servers
              .listen({ project, redis: redis.url, prefix: redis.prefix })
              .then((a) => a.url),
          );
        } finally {
          await worker.close();
        }
      } else await check((await servers.listen({ project })).url);
    });
  });
}

async function check(url: string): Promise<void> {
  const client = apiClient(url);
  const started = await client.post('/v1/runs?wait=20', { directive: 'release' });
  expect(started.body).toMatchObject({
    status: 'waiting',
    waiting: [
      {
        step: 'approve',
        signal: 'approve',
        answer: {
          kind: 'fields',
          fields: [
            { name: 'approved', type: 'boolean', required: true },
            { name: 'days', type: 'integer', required: false, description: 'Days to wait' },
          ],
        },
      },
    ],
  });
  const runId = started.body.runId as string;
  const before = (await client.get(`/v1/runs/${runId}`)).body;

  const refused = await client.post(`/v1/runs/${runId}/signals/approve`, {
    payload: { approved: 'no', days: 1.5 },
  });
  expect(refused.status).toBe(422);
  expect(refused.body.error).toMatchObject({
    code: 'INVALID_PAYLOAD',
    details: {
      runId,
      step: 'approve',
      signal: 'approve',
      problems: [
        'field "approved" must be a boolean, got "no"',
        'field "days" must be an integer, got 1.5',
      ],
    },
  });
  expect(refused.body.error.hint).toContain('{"approved":true,"days":1}');
  expect((await client.get(`/v1/runs/${runId}`)).body).toEqual(before);

  const approved = await client.post(`/v1/runs/${runId}/signals/approve?wait=20`, {
    payload: { approved: true },
  });
  expect(approved.status).toBe(200);
  expect(approved.body).toMatchObject({
    status: 'waiting',
    waiting: [{ step: 'window', signal: 'opens', answer: { kind: 'whole', type: 'string' } }],
  });
  const whole = await client.post(`/v1/runs/${runId}/signals/opens`, { payload: 9 });
  expect(whole.status).toBe(422);
  expect(whole.body.error.details.problems).toEqual(['the answer must be a string, got 9']);
  const done = await client.post(`/v1/runs/${runId}/signals/opens?wait=20`, { payload: 'at nine' });
  expect(done.status).toBe(200);
  expect(done.body).toMatchObject({
    status: 'completed',
    outputs: { approved: true, opens: 'at nine' },
  });
}
