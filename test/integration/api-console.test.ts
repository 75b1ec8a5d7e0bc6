/**
 * What the console reads through the API, on Redis workers and embedded: a run's whole view,
 * counts by status, runs as they start and change (server-sent events), `/v1/info`, and the
 * console's page and files, public and served with a strict Content-Security-Policy.
 */
import { describe, expect, it } from 'vitest';
import { apiClient, apiServers, openEvents } from '../support/api-server.js';
import { dirigentProcesses, until } from '../support/dirigent-processes.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();
const processes = dirigentProcesses();
const servers = apiServers();
const env = () => ({ ...process.env, REDIS_URL: redis.url, DIRIGENT_PREFIX: redis.prefix });

for (const mode of ['redis', 'embedded'] as const) {
  describe(`console routes (${mode})`, { timeout: 60_000 }, () => {
    async function server() {
      const project = servers.project();
      if (mode === 'redis') await processes.worker(env(), '--project', project);
      const api = await servers.listen(
        { project, ...(mode === 'redis' && { redis: redis.url, prefix: redis.prefix }) },
        { console: { traceUrl: 'http://traces.test/trace/{traceId}' } },
      );
      return { api, client: apiClient(api.url) };
    }

    it("views a run: its inputs, each step's result, the graph, the waterfall and the directive's text", async () => {
      const { client } = await server();
      const run = (await client.post('/v1/runs?wait=20', { directive: 'gate' })).body;
      expect(run.status).toBe('waiting');
      const view = (await client.get(`/v1/runs/${run.runId}/view`)).body;
      expect(view.record).toMatchObject({ runId: run.runId, status: 'waiting' });
      expect(view.inputs).toEqual({});
      expect(view.steps.before).toMatchObject({ status: 'completed', attempts: 1 });
      expect(view.steps.hold.status).toMatch(/running|waiting/);
      expect(view.graph.nodes.map((n: { id: string }) => n.id)).toEqual([
        'start',
        'end',
        's:before',
        's:hold',
        's:after',
      ]);
      expect(
        view.timeline.map((r: { step: string; endedAt: number | null }) => [
          r.step,
          r.endedAt === null,
        ]),
      ).toEqual([
        ['before', false],
        ['hold', true],
      ]);
      expect(view.source).toMatchObject({ file: '.ai/directives/gate.md' });
      expect(view.source.text).toContain('<wait signal="go"/>');
      expect(view).toMatchObject({ parentRunId: null, children: [] });
      const unknown = await client.get('/v1/runs/no-such-run/view');
      expect([unknown.status, unknown.body.error.code]).toEqual([404, 'RUN_NOT_FOUND']);
    });

    it('counts runs by status, for a directive, and in a time window', async () => {
      const { client } = await server();
      await client.post('/v1/runs?wait=20', { directive: 'hello', inputs: { who: 'a' } });
      await client.post('/v1/runs?wait=20', { directive: 'gate' });
      const all = (await client.get('/v1/runs/counts')).body;
      expect(all).toMatchObject({ total: 2, byStatus: { completed: 1, waiting: 1, failed: 0 } });
      expect((await client.get('/v1/runs/counts?directive=hello')).body).toMatchObject({
        total: 1,
        byStatus: { completed: 1, waiting: 0 },
      });
      expect((await client.get(`/v1/runs/counts?since=${Date.now() + 60_000}`)).body.total).toBe(0);
      expect((await client.get('/v1/runs/counts?since=yesterday')).status).toBe(400);
    });

    it('tells of runs that start and change status after the stream opened', async () => {
      const { api, client } = await server();
      const stream = await openEvents(`${api.url}/v1/runs/events`);
      await until(() => stream.events.length > 0, 5000, 'runs.open');
      expect(stream.events[0]!.event).toBe('runs.open');
      const started = (await client.post('/v1/runs', { directive: 'steps' })).body;
      const statuses = () =>
        stream.events
          .filter((e) => e.event === 'runs.changed')
          .flatMap((e) => e.data.runs)
          .filter((r: { runId: string }) => r.runId === started.runId)
          .map((r: { status: string }) => r.status);
      await until(() => statuses().includes('completed'), 15_000, 'the run to be told completed');
      expect(statuses().at(-1)).toBe('completed');
      stream.abort();
      await until(() => api.app.openEventStreams === 0, 5000, 'the stream to be let go');
    });

    it('serves the console page and its files without a token, under a strict policy', async () => {
      const { api, client } = await server();
      const anonymous = apiClient(api.url, null);
      for (const path of ['/', '/runs/abc', '/directives', '/directives/a/b']) {
        const page = await anonymous.get(path);
        expect(page.status, path).toBe(200);
        expect(page.headers.get('content-type')).toMatch(/^text\/html/);
        expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
        expect(page.body).toContain('/console/app.js');
      }
      const script = await anonymous.get('/console/app.js');
      expect([script.status, script.headers.get('content-type')]).toEqual([
        200,
        expect.stringMatching(/javascript/),
      ]);
      expect((await anonymous.get('/v1/info')).status).toBe(401);
      expect((await client.get('/v1/info')).body).toMatchObject({
        mode,
        traceUrl: 'http://traces.test/trace/{traceId}',
      });
      const doc = (await client.get('/openapi.json')).body;
      expect(Object.keys(doc.paths)).toEqual(
        expect.arrayContaining([
          '/v1/runs/{runId}/view',
          '/v1/runs/counts',
          '/v1/runs/events',
          '/v1/info',
        ]),
      );
      expect(Object.keys(doc.paths)).not.toContain('/');
    });
  });
}
