/**
 * `GET /v1/runs/:runId/events`: a run's progress as server-sent events, read with a real HTTP
 * client, on Redis workers and embedded: the record first, the steps in order, the end, and a
 * watch that ends when the client hangs up.
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { apiClient, apiServers, openEvents, TOKEN, type SseEvent } from '../support/api-server.js';
import { writeDirective } from '../support/directive-file.js';
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
      // Nothing more while it waits: the record says what it waits for. An absence has no event
      // to wait for, so this looks once more after a while (the behaviour under test).
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

/** An SSE event with its id, as a client that resumes reads it. */
interface FeedEvent {
  id: string;
  event: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any;
}

/**
 * Opens `url`'s event stream, sending `lastEventId` when given: `events` (with their ids) fill in
 * as they come, `ended` resolves when the stream ends, `abort()` hangs up.
 */
async function streamFeed(url: string, lastEventId?: string) {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: {
      authorization: `Bearer ${TOKEN}`,
      accept: 'text/event-stream',
      ...(lastEventId !== undefined && { 'last-event-id': lastEventId }),
    },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  const events: FeedEvent[] = [];
  const ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const lines = buffer.slice(0, cut).split('\n');
          buffer = buffer.slice(cut + 2);
          const field = (name: string) =>
            lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
          const data = field('data');
          if (data !== undefined)
            events.push({
              id: field('id') ?? '',
              event: field('event') ?? '',
              data: JSON.parse(data),
            });
        }
      }
    } catch (err) {
      if (!controller.signal.aborted) throw err;
    }
  })();
  return { events, ended, abort: () => controller.abort() };
}

/** Every event of `url`'s stream, to its end. */
async function readFeed(url: string, lastEventId?: string): Promise<FeedEvent[]> {
  const stream = await streamFeed(url, lastEventId);
  await stream.ended;
  return stream.events;
}

/** `step.started:a#1`, `step.ended:a`, `step.retrying:a`, `run.ended`: what a feed's order shows. */
const order = (events: FeedEvent[]) =>
  events.map((e) =>
    e.event === 'step.started'
      ? `${e.event}:${e.data.step}#${e.data.attempt}`
      : e.event.startsWith('step.')
        ? `${e.event}:${e.data.step}`
        : e.event,
  );

/** Five quick steps, the third failing once before it succeeds. */
const FIVE_STEPS = `<process>
    <step name="s1"><render>one</render></step>
    <step name="s2"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo two"/></execute></step>
    <step name="s3">
      <retry attempts="3" backoff="fixed" delay_ms="50"/>
      <execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="if [ -f s3.mark ]; then echo three; else touch s3.mark; exit 1; fi"/></execute>
    </step>
    <step name="s4"><render>four</render></step>
    <step name="s5"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo five"/></execute></step>
  </process>`;

for (const mode of ['redis', 'embedded'] as const) {
  describe(`a run's event feed (${mode})`, { timeout: 60_000 }, () => {
    async function server() {
      const project = servers.project();
      writeDirective(join(project, '.ai', 'directives'), 'five', FIVE_STEPS);
      if (mode === 'redis') await processes.worker(env(), '--project', project);
      const api = await servers.listen({
        project,
        ...(mode === 'redis' && { redis: redis.url, prefix: redis.prefix }),
      });
      return { api, client: apiClient(api.url) };
    }

    it('tells a five-step run whole and in order: each start before its end, the retry as step.retrying', async () => {
      const { api, client } = await server();
      const started = await client.post('/v1/runs?wait=20', { directive: 'five' });
      expect(started.body.status).toBe('completed');
      const runId = started.body.runId as string;
      // From the feed's first event: what a watcher that opened the stream before the start sees.
      const events = await readFeed(`${api.url}/v1/runs/${runId}/events?after=0`);
      expect(order(events)).toEqual([
        'run.started',
        'step.started:s1#1',
        'step.ended:s1',
        'step.started:s2#1',
        'step.ended:s2',
        'step.started:s3#1',
        'step.retrying:s3',
        'step.started:s3#2',
        'step.ended:s3',
        'step.started:s4#1',
        'step.ended:s4',
        'step.started:s5#1',
        'step.ended:s5',
        'run.ended',
      ]);
      expect(events.find((e) => e.event === 'step.retrying')!.data).toMatchObject({
        runId,
        step: 's3',
        error: { code: 'COMMAND_FAILED' },
      });
      expect(events.at(-1)!.data).toMatchObject({ runId, status: 'completed' });
      const ids = events.map((e) => e.id);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('goes on after Last-Event-ID: a client that reconnects gets what came after, and only that', async () => {
      const { api, client } = await server();
      const gate = await client.post('/v1/runs?wait=20', { directive: 'gate' });
      expect(gate.body.status).toBe('waiting');
      const runId = gate.body.runId as string;
      const url = `${api.url}/v1/runs/${runId}/events`;
      const first = await streamFeed(url);
      await until(() => first.events.length > 0, 5000, 'the record');
      first.abort();
      await first.ended;
      expect(first.events.map((e) => e.event)).toEqual(['run.state']);
      const signalled = await client.post(`/v1/runs/${runId}/signals/go`, { payload: 'yes' });
      expect(signalled.body.status).toBe('completed');
      // Back with the id of the record it saw: what the signal set going, and nothing before.
      const rest = await readFeed(url, first.events[0]!.id);
      expect(order(rest)).toEqual([
        'step.ended:hold',
        'step.started:after#1',
        'step.ended:after',
        'run.ended',
      ]);
      // An id the feed does not hold: the record as it stands, then the end.
      expect(order(await readFeed(url, 'not-an-id'))).toEqual(['run.state', 'run.ended']);
    });
  });
}

describe("a run's event feed across a takeover (redis)", { timeout: 60_000 }, () => {
  it('loses no event when the worker driving the run is killed and another takes it over', async () => {
    const project = servers.project();
    const step = (name: string) =>
      `<step name="${name}"><retry attempts="3" backoff="fixed" delay_ms="50"/><execute item_type="tool" item_id="dirigent/util/sleep"><param name="ms" value="300"/></execute></step>`;
    writeDirective(
      join(project, '.ai', 'directives'),
      'five_naps',
      `<process>${['s1', 's2', 's3', 's4', 's5'].map(step).join('')}</process>`,
    );
    const driver = await processes.worker(env(), '--project', project);
    const api = await servers.listen({ project, redis: redis.url, prefix: redis.prefix });
    const started = await apiClient(api.url).post('/v1/runs', { directive: 'five_naps' });
    const runId = started.body.runId as string;
    const stream = await streamFeed(`${api.url}/v1/runs/${runId}/events?after=0`);
    await until(
      () => stream.events.some((e) => e.event === 'step.ended' && e.data.step === 's2'),
      15_000,
      'the second step to end',
    );
    await processes.worker(env(), '--project', project);
    driver.kill('SIGKILL');
    await stream.ended;
    const list = order(stream.events);
    expect(stream.events.at(-1)!.data, list.join(' ')).toMatchObject({ status: 'completed' });
    expect(list.filter((n) => n.startsWith('step.ended:'))).toEqual(
      ['s1', 's2', 's3', 's4', 's5'].map((s) => `step.ended:${s}`),
    );
    for (const s of ['s1', 's2', 's3', 's4', 's5'])
      expect(list.indexOf(`step.started:${s}#1`), list.join(' ')).toBeLessThan(
        list.indexOf(`step.ended:${s}`),
      );
  });
});
