/**
 * `GET /v1/runs/:runId/events`: a run's progress as server-sent events, read with a real HTTP
 * client, on Redis workers and embedded: the record first, the steps in order, the end, and a
 * watch that ends when the client hangs up.
 */
import { describe, expect, it } from 'vitest';
import { apiClient, apiServers, openEvents, type SseEvent } from '../support/api-server.js';
import { dirigentProcesses, until } from '../support/dirigent-processes.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();
const processes = dirigentProcesses();
const servers = apiServers();

const env = () => ({ ...process.env, REDIS_URL: redis.url, DIRIGENT_PREFIX: redis.prefix });

/** The names of the events, with the step of step events: `step.ended:a`. */
const names = (events: SseEvent[]) =>
  events.map((e) =>
    e.event === 'step.ended'
      ? `${e.event}:${e.data.name}`
      : e.event === 'step.started'
        ? `${e.event}:${e.data.step}`
        : e.event,
  );

for (const mode of ['redis', 'embedded'] as const) {
  describe(`run events (${mode})`, { timeout: 60_000 }, () => {
    async function server(options: { heartbeatMs?: number } = {}) {
      const project = servers.project();
      if (mode === 'redis') await processes.worker(env(), '--project', project);
      const api = await servers.listen(
        { project, ...(mode === 'redis' && { redis: redis.url, prefix: redis.prefix }) },
        options,
      );
      return { api, client: apiClient(api.url) };
    }

    it('sends the record first, then each step in order, then the end, and closes', async () => {
      const { api, client } = await server();
      const started = await client.post('/v1/runs', { directive: 'steps' });
      const runId = started.body.runId as string;
      const stream = await openEvents(`${api.url}/v1/runs/${runId}/events`);
      expect(stream.response.status).toBe(200);
      expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      await stream.ended;
      const list = names(stream.events);
      expect(list[0]).toBe('run.state');
      expect(list.at(-1)).toBe('run.ended');
      expect(stream.events.at(-1)!.data).toMatchObject({ runId, status: 'completed' });
      // Each step ends once, in order, whether the record sent first showed it or an event did.
      const firstSteps = (stream.events[0]!.data.steps as { name: string }[]).map((s) => s.name);
      const ended = list.filter((n) => n.startsWith('step.ended:')).map((n) => n.slice(11));
      expect([...firstSteps, ...ended]).toEqual(['a', 'b', 'c']);
      expect(ended.length).toBeGreaterThanOrEqual(2);
      // A step's start comes before its end.
      for (const step of ended) {
        const start = list.indexOf(`step.started:${step}`);
        if (start >= 0) expect(start).toBeLessThan(list.indexOf(`step.ended:${step}`));
      }
      await until(() => api.app.openEventStreams === 0, 5000, 'the stream to be let go');
    });

    it('follows a waiting run through its signal to its end', async () => {
      const { api, client } = await server();
      const gate = await client.post('/v1/runs?wait=20', { directive: 'gate' });
      expect(gate.body.status).toBe('waiting');
      const runId = gate.body.runId as string;
      const stream = await openEvents(`${api.url}/v1/runs/${runId}/events`);
      await until(() => stream.events.length > 0, 5000, 'the first event');
      // Nothing more while it waits: the record says what it waits for.
      await new Promise((r) => setTimeout(r, 600));
      expect(names(stream.events), JSON.stringify(stream.events)).toEqual(['run.state']);
      expect(stream.events[0]!.data).toMatchObject({
        status: 'waiting',
        waiting: [expect.objectContaining({ signal: 'go' })],
      });
      const signalled = await client.post(`/v1/runs/${runId}/signals/go`, { payload: 'yes' });
      expect(signalled.body.status).toBe('completed');
      await stream.ended;
      const list = names(stream.events);
      expect(list.filter((n) => n.startsWith('step.ended:'))).toEqual([
        'step.ended:hold',
        'step.ended:after',
      ]);
      expect(list.at(-1)).toBe('run.ended');
    });

    it('answers a run that has ended with its record and the end at once', async () => {
      const { api, client } = await server();
      const done = await client.post('/v1/runs?wait=20', {
        directive: 'hello',
        inputs: { who: 'x' },
      });
      const stream = await openEvents(`${api.url}/v1/runs/${done.body.runId}/events`);
      await stream.ended;
      expect(names(stream.events)).toEqual(['run.state', 'run.ended']);
    });

    it('sends heartbeats, and lets the watch go when the client hangs up', async () => {
      const { api, client } = await server({ heartbeatMs: 100 });
      const gate = await client.post('/v1/runs?wait=20', { directive: 'gate' });
      const stream = await openEvents(`${api.url}/v1/runs/${gate.body.runId}/events`);
      await until(() => stream.comments.includes('heartbeat'), 5000, 'a heartbeat');
      expect(api.app.openEventStreams).toBe(1);
      stream.abort();
      await stream.ended;
      await until(() => api.app.openEventStreams === 0, 5000, 'the stream to be let go');
    });
  });
}
