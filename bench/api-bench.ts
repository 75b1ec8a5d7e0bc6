/**
 * Runs started through the HTTP API on Redis, against a bare Fastify route that validates the same
 * body and adds the same start job (the least an HTTP trigger on the same framework can cost), and
 * against adding the job to BullMQ directly (no HTTP at all): `POST /v1/runs` per second with 32
 * requests in flight, in the same rounds and on the same Redis. And the
 * latency of `POST /v1/runs?wait` for a one-step run on workers in this process, against running
 * it through the operations directly (`Dirigent.run`, no HTTP).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { Queue } from 'bullmq';
import Fastify from 'fastify';
import { buildApi } from '../src/api/build-api.js';
import { Dirigent } from '../src/operations/dirigent.js';
import { connectRedis } from '../src/redis/redis-connection.js';
import { QueueName } from '../src/redis/queue-names.js';
import { queueOptions } from '../src/redis/queue-options.js';
import { RunWorker } from '../src/redis/run-worker/run-worker.js';
import { ToolWorker } from '../src/redis/tool-worker/tool-worker.js';
import { benchRow, withinRounds } from './bench-row.js';
import type { BenchSection } from './bench-section.js';
import { median } from './median.js';

/** Goals: API starts at least 0.7× a bare Fastify route's rate doing the same add. */
export const API_GOALS = { startsRatio: 0.7 } as const;

const TOKEN = 'bench-token-0123456789abcdef';
const IN_FLIGHT = 32;

/** µs per operation of `count` calls of `op`, `inFlight` at a time. */
async function throughput(count: number, inFlight: number, op: (i: number) => Promise<unknown>) {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) await op(next++);
    }),
  );
  return ((performance.now() - t0) * 1000) / count;
}

/** Measures starts and `?wait` latency (see the module comment). */
export async function apiBench(options: {
  rounds: number;
  starts: number;
  waits: number;
  redisUrl?: string;
}): Promise<BenchSection> {
  const url = options.redisUrl ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `dirigent-bench-api:${randomUUID()}`;
  const project = mkdtempSync(join(tmpdir(), 'dirigent-bench-api-'));
  const directives = join(project, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeFileSync(
    join(directives, 'one.md'),
    '# one\n\n```xml\n<directive name="one" version="1.0.0">' +
      '<inputs><input name="n" type="integer" default="0"/></inputs>' +
      '<process><step name="echo"><execute item_type="tool" item_id="dirigent/util/echo"><param name="n" value="${inputs.n}"/></execute></step></process>' +
      '</directive>\n```\n',
  );
  const redis = connectRedis(url);
  const dirigent = await Dirigent.open({ project, redis: url, prefix });
  const app = await buildApi(dirigent, { tokens: [TOKEN], rateLimit: 0 });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const raw = new Queue(QueueName.RUNS, queueOptions(redis, prefix));
  // What a start job carries, for the raw side: the same directive text and inputs.
  const loaded = await dirigent.load('one');
  const source = { directive: 'one', text: loaded.text, hash: 'bench', ext: '.md' };
  // A lean client, as a load generator would be: node:http with keep-alive, not fetch.
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  // The bare route: the same body schema (a directive's name, inputs as an object), the same
  // bearer token, the same start job added; no directive read, no inputs validated.
  const bareApp = Fastify();
  bareApp.post(
    '/v1/runs',
    {
      schema: {
        body: {
          type: 'object',
          required: ['directive'],
          additionalProperties: false,
          properties: { directive: { type: 'string', minLength: 1 }, inputs: { type: 'object' } },
        },
      },
    },
    async (req, reply) => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return reply.code(401).send({});
      const body = req.body as { directive: string; inputs?: Record<string, unknown> };
      const runId = randomUUID();
      await raw.add(
        'start',
        { kind: 'start', runId, source, inputs: body.inputs ?? {} },
        { jobId: runId, removeOnComplete: true },
      );
      return reply.code(201).send({ runId, status: 'queued' });
    },
  );
  const bareBase = await bareApp.listen({ port: 0, host: '127.0.0.1' });
  const post = (path: string, body: unknown, to = base) =>
    new Promise<{ status?: string; runId?: string }>((resolve, reject) => {
      const text = JSON.stringify(body);
      const req = request(
        `${to}${path}`,
        {
          method: 'POST',
          agent,
          headers: {
            authorization: `Bearer ${TOKEN}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(text),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const json = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
              status?: string;
              runId?: string;
            };
            if ((res.statusCode ?? 500) >= 300)
              reject(new Error(`POST ${path}: ${res.statusCode} ${JSON.stringify(json)}`));
            else resolve(json);
          });
        },
      );
      req.on('error', reject);
      req.end(text);
    });

  const api: number[] = [];
  const bare: number[] = [];
  const bull: number[] = [];
  const waited: number[] = [];
  const direct: number[] = [];
  const p95: number[] = [];
  try {
    // Starts: nothing takes the jobs, so each side only enqueues; the queue is emptied between.
    for (let r = 0; r < options.rounds; r++) {
      const sides = [
        async () =>
          api.push(
            await throughput(options.starts, IN_FLIGHT, (i) =>
              post('/v1/runs', { directive: 'one', inputs: { n: i } }),
            ),
          ),
        async () =>
          bare.push(
            await throughput(options.starts, IN_FLIGHT, (i) =>
              post('/v1/runs', { directive: 'one', inputs: { n: i } }, bareBase),
            ),
          ),
        async () =>
          bull.push(
            await throughput(options.starts, IN_FLIGHT, (i) =>
              raw.add(
                'start',
                { kind: 'start', runId: randomUUID(), source, inputs: { n: i } },
                { jobId: randomUUID(), removeOnComplete: true },
              ),
            ),
          ),
      ];
      for (let i = 0; i < sides.length; i++) await sides[(r + i) % sides.length]!();
      await raw.obliterate({ force: true });
    }
    // Latency: a one-step run on workers in this process, answered when it ends.
    const runs = new RunWorker({ redis, prefix, projectDir: project });
    const tools = new ToolWorker({ redis, prefix, projectDir: project });
    await Promise.all([runs.worker.waitUntilReady(), tools.worker.waitUntilReady()]);
    try {
      for (let i = 0; i < 5; i++) await post('/v1/runs?wait=10', { directive: 'one' }); // warm
      for (let r = 0; r < options.rounds; r++) {
        const times: number[] = [];
        const directTimes: number[] = [];
        for (let i = 0; i < options.waits; i++) {
          const t0 = performance.now();
          const answer = await post('/v1/runs?wait=10', { directive: 'one', inputs: { n: i } });
          times.push((performance.now() - t0) * 1000);
          if (answer.status !== 'completed') throw new Error(`a run answered ${answer.status}`);
          const t1 = performance.now();
          await dirigent.run({ directive: 'one', inputs: { n: i } });
          directTimes.push((performance.now() - t1) * 1000);
        }
        waited.push(median(times));
        direct.push(median(directTimes));
        p95.push([...times].sort((a, b) => a - b)[Math.floor(times.length * 0.95)]!);
      }
    } finally {
      await Promise.all([runs.close(), tools.close()]);
    }
  } finally {
    agent.destroy();
    await app.close();
    await bareApp.close();
    await dirigent.close();
    await raw.obliterate({ force: true }).catch(() => undefined);
    await raw.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    rmSync(project, { recursive: true, force: true });
  }

  const ratio = withinRounds(bare, api, (b, a) => b / a);
  const rawRatio = withinRounds(bull, api, (b, a) => b / a);
  const bareRawRatio = withinRounds(bull, bare, (b, a) => b / a);
  return {
    title: 'Runs started through the HTTP API on Redis',
    rows: [
      benchRow(
        `\`POST /v1/runs\` (${IN_FLIGHT} in flight, bearer token, validation, a start job)`,
        api,
        'starts/s',
        `**${ratio.toFixed(2)}×** the bare route's rate; ${rawRatio.toFixed(2)}× the raw add rate`,
        {
          text: `≥ ${API_GOALS.startsRatio}× the bare route`,
          met: () => ratio >= API_GOALS.startsRatio,
        },
      ),
      benchRow(
        `A bare Fastify \`POST /v1/runs\` (${IN_FLIGHT} in flight): the same body schema and bearer token, then \`queue.add\` of the same start job`,
        bare,
        'starts/s',
        `baseline; ${bareRawRatio.toFixed(2)}× the raw add rate`,
      ),
      benchRow(
        `BullMQ \`queue.add\` of the same start job (${IN_FLIGHT} in flight)`,
        bull,
        'adds/s',
      ),
      benchRow(
        '`POST /v1/runs?wait` of a one-step run, answered when it ends (median)',
        waited,
        'runs/s',
        `p95 ${(median(p95) / 1000).toFixed(1)} ms; +${(withinRounds(waited, direct, (w, d) => w - d) / 1000).toFixed(2)} ms over the operations called directly`,
      ),
      benchRow('`Dirigent.run` of the same run, no HTTP (median)', direct, 'runs/s'),
    ],
    notes: [
      `What the API adds to the least an HTTP start can cost: the bare route is the same server framework in the same process (Fastify, one route, the same body schema and bearer token), then the same \`queue.add\`; the API's start also resolves the directive (its compiled machine and job source cached by the project's generation, so a start reads no file), validates the inputs against the directive's, names the run and its trace, and answers the run's whole record through its response schema. ${ratio >= API_GOALS.startsRatio ? `At ${ratio.toFixed(2)}× the bare route's rate, that work is small beside the HTTP layer's, which both sides pay` : `The goal is not met: that work takes more than ${(1 / API_GOALS.startsRatio - 1).toFixed(2)}× of the bare route's time`}. Both HTTP sides cost several raw adds: an HTTP request and its answer on both ends (client and server share this process and its two cores with Redis), routing, validation and serialization come before the add.`,
      `Each round starts ${options.starts} runs through the API, ${options.starts} through the bare route and adds ${options.starts} start jobs to BullMQ, the three taking turns going first, ${IN_FLIGHT} at a time from this process (node:http with keep-alive to a Fastify server in this process, on 127.0.0.1), with no worker taking them; the queue is emptied between rounds. An API start checks the token, validates the body against its schema, resolves and reads the directive (its compiled machine is cached), validates the inputs, hashes the tools it names, and adds the job; the raw side adds the same job data and does nothing else. The latency rows run a one-step echo directive on a run worker and a tool worker in this process, ${options.waits} times per round, one at a time.`,
    ],
  };
}
