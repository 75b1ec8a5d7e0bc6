/**
 * The spans of a run on Redis, recorded by a client and a worker in this process into the SDK's
 * in-memory exporter: a step whose call runs in process on the worker driving the run (an eager
 * call) is one span, its attempt's, which tells the call; a call made as a tool job has the job's
 * span under its attempt, which tells the runtime call and how long the job waited in the queue;
 * a job under a lock has its lock wait as a child. A run whose trace is not sampled records no
 * span anywhere, only metrics.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  ParentBasedSampler,
  type ReadableSpan,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunsClient } from '../../src/redis/client/runs-client.js';
import { traceIdOfRun } from '../../src/telemetry/run-trace.js';
import { projectRunSource } from '../support/directive-file.js';
import { inProcessWorker } from '../support/in-process-worker.js';
import { redisForTest } from '../support/redis.js';
import { memoryTelemetry, parentIdOf, rootsOf } from '../support/telemetry.js';
import { waitFor } from '../support/wait-for.js';

const redis = redisForTest();
let project: string;
let telemetry: ReturnType<typeof memoryTelemetry>;
const open: { close(): Promise<void> }[] = [];

beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-job-spans-'));
});
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
  await telemetry.close();
  rmSync(project, { recursive: true, force: true });
});

/** A worker serving both queues and a client, both recording into one in-memory telemetry. */
function deployment(options: { eager?: boolean; sampler?: Sampler } = {}): RunsClient {
  telemetry = memoryTelemetry(options.sampler);
  open.push(
    inProcessWorker(redis, {
      projectDir: project,
      telemetry: telemetry.options,
      ...(options.eager !== undefined && { eager: options.eager }),
    }),
  );
  const client = new RunsClient(redis.connect(), redis.prefix, telemetry.options);
  open.push(client);
  return client;
}

/** Runs directive `name` (`body` inside `<directive>`) to its end; its id. */
async function run(client: RunsClient, name: string, body: string): Promise<string> {
  const source = await projectRunSource(
    project,
    name,
    `<metadata><description>test</description></metadata>${body}`,
  );
  const runId = await client.start(source, {});
  await client.wait(runId);
  return runId;
}

/** The spans of the run's trace, once its drive span (the last to end) has arrived. */
async function spansOf(runId: string, directive: string): Promise<ReadableSpan[]> {
  const traceId = traceIdOfRun(runId);
  const ofRun = () => telemetry.spans().filter((s) => s.spanContext().traceId === traceId);
  await waitFor(() => ofRun().some((s) => s.name === `drive ${directive}`), {
    what: `the drive span of ${directive}`,
  });
  return ofRun();
}

const echo = (name: string, extra = '') =>
  `<step name="${name}">${extra}<execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="${name}"/></execute></step>`;
const names = (spans: ReadableSpan[]) => spans.map((s) => s.name).sort();
const byName = (spans: ReadableSpan[], name: string) => spans.find((s) => s.name === name)!;

describe('the spans of a run on Redis', { timeout: 30_000 }, () => {
  it('are one span per step whose call runs in process, telling the call, and the run, its start and its drive', async () => {
    const client = deployment();
    const runId = await run(client, 'pair', `<process>${echo('a')}${echo('b')}</process>`);
    const spans = await spansOf(runId, 'pair');
    expect(names(spans)).toEqual(['drive pair', 'run pair', 'start pair', 'step a', 'step b']);
    const [root] = rootsOf(spans);
    expect(root!.name).toBe('run pair');
    for (const step of ['step a', 'step b']) {
      const s = byName(spans, step);
      expect(parentIdOf(s)).toBe(root!.spanContext().spanId);
      expect(s.attributes).toMatchObject({
        'dirigent.step.outcome': 'completed',
        'dirigent.tool.id': 'dirigent/util/echo',
        'dirigent.tool.in_process': true,
        'dirigent.worker.id': expect.stringMatching(/:\d+$/),
        'dirigent.runtime.primitive': 'builtin',
        'dirigent.tool.outcome': 'completed',
      });
    }
    const drive = byName(spans, 'drive pair');
    expect(drive.kind).toBe(SpanKind.CONSUMER);
    expect(drive.attributes).toMatchObject({
      'dirigent.run.taken_up': 'start',
      'dirigent.run.status': 'completed',
      'dirigent.queue.wait_ms': expect.any(Number),
    });
    expect(byName(spans, 'start pair').kind).toBe(SpanKind.PRODUCER);
  });

  it("has a tool job's span under its step attempt, telling the runtime call and the job's queue wait", async () => {
    const client = deployment({ eager: false });
    const runId = await run(
      client,
      'jobs',
      `<process>${echo('a')}<step name="boom"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="exit 3"/></execute><retry attempts="1"/></step></process>`,
    );
    const spans = await spansOf(runId, 'jobs');
    expect(names(spans)).toEqual([
      'drive jobs',
      'run jobs',
      'start jobs',
      'step a',
      'step boom',
      'tool dirigent/shell/bash',
      'tool dirigent/util/echo',
    ]);
    const echoJob = byName(spans, 'tool dirigent/util/echo');
    expect(echoJob.kind).toBe(SpanKind.CONSUMER);
    expect(parentIdOf(echoJob)).toBe(byName(spans, 'step a').spanContext().spanId);
    expect(echoJob.attributes).toMatchObject({
      'messaging.system': 'bullmq',
      'messaging.destination.name': 'dirigent-tools',
      'dirigent.step.name': 'a',
      'dirigent.step.attempt': 1,
      'dirigent.queue.wait_ms': expect.any(Number),
      'dirigent.runtime.primitive': 'builtin',
      'dirigent.tool.outcome': 'completed',
    });
    expect(echoJob.status.code).toBe(SpanStatusCode.OK);
    expect(byName(spans, 'step a').attributes['dirigent.tool.in_process']).toBeUndefined();
    const failed = byName(spans, 'tool dirigent/shell/bash');
    expect(parentIdOf(failed)).toBe(byName(spans, 'step boom').spanContext().spanId);
    expect(failed.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed.attributes).toMatchObject({
      'error.type': 'COMMAND_FAILED',
      'process.exit.code': 3,
      'dirigent.tool.outcome': 'failed',
    });
  });

  it('has the lock wait of a job under a lock as a child of its span', async () => {
    const client = deployment();
    const runId = await run(
      client,
      'locked',
      `<process>${echo('a', '<lock key="k" limit="1"/>')}</process>`,
    );
    const spans = await spansOf(runId, 'locked');
    const job = byName(spans, 'tool dirigent/util/echo');
    const wait = byName(spans, 'lock wait');
    expect(parentIdOf(wait)).toBe(job.spanContext().spanId);
    expect(names(spans).filter((n) => n.startsWith('runtime') || n === 'queue wait')).toEqual([]);
  });

  it('records no span of a run whose trace is not sampled, on either side, and still its metrics', async () => {
    const client = deployment({
      sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }),
    });
    const eager = await run(client, 'quiet', `<process>${echo('a')}</process>`);
    const metrics = () => telemetry.metrics().then((m) => m.get('dirigent.run.ended') ?? []);
    await waitFor(async () => (await metrics()).length > 0, { what: "the run's end counted" });
    expect(
      telemetry.spans().filter((s) => s.spanContext().traceId === traceIdOfRun(eager)),
    ).toEqual([]);
    expect(telemetry.spans()).toEqual([]);
    expect((await telemetry.metrics()).get('dirigent.tool.calls')![0]!.value).toBe(1);
  });
});
