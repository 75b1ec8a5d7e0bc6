/**
 * One trace per run across processes: the CLI and two `dirigent worker` processes each export
 * over OTLP/HTTP to a receiver on 127.0.0.1, and every span of a run arrives under the run's trace
 * id, with one root and no dangling parent: the client's start, the workers' drives, step
 * attempts and tool jobs. A run whose driving worker is killed goes on in the same trace, and the
 * takeover shows in it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { traceIdOfRun } from '../../src/telemetry/run-trace.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentProcesses, until } from '../support/dirigent-processes.js';
import {
  otlpEnv,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../support/otlp-receiver.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();
const processes = dirigentProcesses();
let project: string;
let receiver: OtlpReceiver;

beforeEach(async () => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-otel-'));
  receiver = await startOtlpReceiver();
});
afterEach(async () => {
  await receiver.close();
  rmSync(project, { recursive: true, force: true });
});

const env = (service: string) => ({
  ...process.env,
  REDIS_URL: redis.url,
  DIRIGENT_PREFIX: redis.prefix,
  DIRIGENT_LOCK_MS: '2000',
  ...otlpEnv(receiver, service),
});

/** The spans of one trace that arrived so far. */
const traceOf = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);

/** Every parent is in the trace; returns its roots. */
function roots(spans: ReceivedSpan[]): ReceivedSpan[] {
  const ids = new Set(spans.map((s) => s.spanId));
  const dangling = spans.filter((s) => s.parentSpanId !== undefined && !ids.has(s.parentSpanId));
  expect(
    dangling.map((s) => s.name),
    'spans whose parent never arrived',
  ).toEqual([]);
  return spans.filter((s) => s.parentSpanId === undefined);
}

describe('telemetry across processes', { timeout: 60_000 }, () => {
  it('sends every span of a run to one trace, from the CLI and two workers', async () => {
    const workers = await Promise.all([
      processes.worker(env('worker-a'), '--project', project),
      processes.worker(env('worker-b'), '--project', project),
    ]);
    const file = writeDirective(
      project,
      'fan',
      `<inputs><input name="items" type="array"/></inputs>
      <process>
        <step name="each"><foreach over="\${inputs.items}" as="n" parallel="4"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo \${n}"/></execute></foreach></step>
        <step name="last"><execute item_type="tool" item_id="dirigent/util/echo"><param name="done" value="yes"/></execute></step>
      </process>`,
    );
    const r = await processes.cli(
      env('cli'),
      'run',
      file,
      '--inputs',
      JSON.stringify({ items: [1, 2, 3, 4, 5, 6] }),
      '--json',
      '--project',
      project,
    );
    expect(r.code, r.stderr).toBe(0);
    const { runId } = JSON.parse(r.stdout) as { runId: string };
    const traceId = traceIdOfRun(runId);
    // 1 start, 1 run, 2 steps, a drive per stretch a worker drove the run, and a tool job per
    // foreach item (each telling its runtime call and queue wait); the last step's call runs in
    // process on the worker driving the run, and its step's span tells it. Workers export on
    // their own schedule: wait for all of them, not a fixed time.
    const count = (name: string) => traceOf(traceId).filter((s) => s.name === name).length;
    await until(
      () =>
        count('tool dirigent/shell/bash') === 6 &&
        count('step last') === 1 &&
        count('run fan') === 1,
      15_000,
      'the spans of the run',
    ).catch((err: unknown) => {
      const names = traceOf(traceId).map((s) => s.name);
      const counted: Record<string, number> = {};
      for (const n of names) counted[n] = (counted[n] ?? 0) + 1;
      throw new Error(`${String(err)}; the spans received: ${JSON.stringify(counted)}`);
    });
    // Drained, each worker has exported every span it made before it exits.
    await Promise.all(
      workers.map((w) => {
        const exited = new Promise((r) => w.once('exit', r));
        w.kill('SIGTERM');
        return exited;
      }),
    );
    const spans = traceOf(traceId);
    const names = spans.map((s) => s.name);
    expect(roots(spans).map((s) => s.name)).toEqual(['run fan']);
    expect(names.filter((n) => n === 'start fan')).toHaveLength(1);
    expect(names.filter((n) => n === 'step each')).toHaveLength(1);
    expect(names.filter((n) => n === 'step last')).toHaveLength(1);
    expect(names.filter((n) => n === 'tool dirigent/shell/bash')).toHaveLength(6);
    expect(names.filter((n) => n.startsWith('drive fan')).length).toBeGreaterThanOrEqual(1);
    expect(names.filter((n) => n.startsWith('runtime') || n === 'queue wait')).toEqual([]);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    for (const tool of spans.filter((s) => s.name.startsWith('tool '))) {
      expect(byId.get(tool.parentSpanId!)!.name).toBe('step each');
      expect(tool.attributes).toMatchObject({
        'dirigent.runtime.primitive': 'builtin',
        'process.exit.code': 0,
        'dirigent.tool.outcome': 'completed',
        'dirigent.queue.wait_ms': expect.any(Number),
      });
    }
    expect(spans.find((s) => s.name === 'step last')!.attributes).toMatchObject({
      'dirigent.tool.in_process': true,
      'dirigent.tool.outcome': 'completed',
    });
    const start = spans.find((s) => s.name === 'start fan')!;
    expect(start.resource['service.name']).toBe('cli');
    expect(byId.get(start.parentSpanId!)!.name).toBe('run fan');
    const services = new Set(spans.map((s) => s.resource['service.name']));
    expect(services.has('cli')).toBe(true);
    expect([...services].filter((s) => String(s).startsWith('worker')).length).toBeGreaterThan(0);
    expect(spans.find((s) => s.name === 'run fan')!.attributes).toMatchObject({
      'dirigent.run.id': runId,
      'dirigent.run.trigger': 'cli',
      'dirigent.run.status': 'completed',
    });
  });

  it('shows a takeover in the same trace when the worker driving the run is killed', async () => {
    await processes.worker(env('tools'), '--queues', 'tools', '--project', project);
    const driver = await processes.worker(
      env('driver-1'),
      '--queues',
      'runs',
      '--project',
      project,
    );
    const bash = (name: string, command: string) =>
      `<step name="${name}"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="${command}"/></execute></step>`;
    const file = writeDirective(
      project,
      'three',
      `<process>${['a', 'b', 'c'].map((s) => bash(s, `echo ${s} >> steps.log; sleep 0.4`)).join('')}</process>`,
    );
    const pending = processes.cli(env('cli'), 'run', file, '--json', '--project', project);
    const log = join(project, 'steps.log');
    await until(() => existsSync(log) && readFileSync(log, 'utf8').includes('b'), 15_000, 'step b');
    // A span still in the killed process's export batch dies with it: wait until step a's
    // span has left, so that the trace is whole by the engine's doing alone.
    await until(() => receiver.spans.some((s) => s.name === 'step a'), 5_000, "step a's span");
    driver.kill('SIGKILL');
    await processes.worker(env('driver-2'), '--queues', 'runs', '--project', project);
    const r = await pending;
    expect(r.code, r.stderr).toBe(0);
    const { runId } = JSON.parse(r.stdout) as { runId: string };
    const traceId = traceIdOfRun(runId);
    await until(() => traceOf(traceId).some((s) => s.name === 'run three'), 15_000, 'the run span');
    const spans = traceOf(traceId);
    const takeover = spans.find(
      (s) => s.name === 'drive three' && s.attributes['dirigent.run.taken_up'] === 'takeover',
    );
    expect(takeover, 'a drive span of the worker that took over').toBeDefined();
    expect(takeover!.resource['service.name']).toBe('driver-2');
    expect(takeover!.events.find((e) => e.name === 'taken over')!.attributes).toMatchObject({
      'dirigent.worker.id': expect.stringMatching(/:\d+$/),
    });
    const run = spans.find((s) => s.name === 'run three')!;
    expect(takeover!.parentSpanId).toBe(run.spanId);
    // The step under way when its driver died is recorded by the one that took over, with the
    // same id: its tool job's span, recorded on the tools worker, still has its parent.
    expect(roots(spans)).toEqual([run]);
    expect(spans.filter((s) => s.name === 'step c')).toHaveLength(1);
    expect(readFileSync(log, 'utf8')).toBe('a\nb\nc\n');
  });

  it("logs a failed run as a JSON line carrying the run's id and its trace", async () => {
    const worker = await processes.worker(
      { ...env('worker'), DIRIGENT_LOG_FORMAT: 'json' },
      '--project',
      project,
    );
    let log = '';
    worker.stderr!.on('data', (c: Buffer) => (log += c.toString()));
    const file = writeDirective(
      project,
      'broken',
      `<process><step name="boom"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="exit 7"/></execute><retry attempts="1"/></step></process>`,
    );
    const r = await processes.cli(env('cli'), 'run', file, '--json', '--project', project);
    expect(r.code).toBe(1);
    const { runId } = JSON.parse(r.stdout) as { runId: string };
    await until(() => log.includes(`run ${runId} failed`), 10_000, 'the log line');
    const lines = log
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const failed = lines.find((l) => String(l.msg).startsWith(`run ${runId} failed:`));
    expect(failed).toMatchObject({
      level: 40,
      run_id: runId,
      trace_id: traceIdOfRun(runId),
      span_id: expect.stringMatching(/^[0-9a-f]{16}$/),
      directive: 'broken',
      status: 'failed',
      error_code: 'COMMAND_FAILED',
    });
    const tool = lines.find((l) => String(l.msg).startsWith('tool dirigent/shell/bash failed'))!;
    expect(tool).toMatchObject({ run_id: runId, trace_id: traceIdOfRun(runId), step: 'boom' });
  });
});
