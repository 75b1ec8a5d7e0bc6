/**
 * A worker embedded in a program (`DirigentWorker`) on the real Redis tells what happens through
 * its typed events: the runs it starts and ends (with their records), the tool calls that fail on
 * it (and whether their failure may be retried), the runs it takes over from a worker that died,
 * and, when it closes, the runs it hands back. A listener that throws does not break it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Dirigent } from '../../src/operations/dirigent.js';
import { SILENT_LOGGER } from '../../src/telemetry/logger.js';
import { DirigentWorker } from '../../src/worker/dirigent-worker.js';
import type { WorkerEvents } from '../../src/worker/worker-events.js';
import type { DirigentWorkerOptions } from '../../src/worker/worker-options.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentProcesses } from '../support/dirigent-processes.js';
import { defaultWorkerEnv } from '../support/in-process-worker.js';
import { redisForTest } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';

const redis = redisForTest();
const processes = dirigentProcesses();
let project: string;
/** Every worker and client a test made: closed after it, whatever happened. */
let opened: { close(): Promise<void> }[] = [];

beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-worker-events-'));
  mkdirSync(join(project, '.ai', 'directives'), { recursive: true });
});
afterEach(async () => {
  await Promise.all(opened.map((o) => o.close()));
  opened = [];
  rmSync(project, { recursive: true, force: true });
});

/** A worker of the test's deployment and project, made (not started) with `options`. */
function worker(options: DirigentWorkerOptions = {}): DirigentWorker {
  const w = new DirigentWorker({
    redis: redis.url,
    prefix: redis.prefix,
    project,
    logger: SILENT_LOGGER,
    ...options,
  });
  opened.push(w);
  return w;
}

/** Resolves with the next event `name` of `w` that `match` takes (listening from now on). */
function next<K extends keyof WorkerEvents>(
  w: DirigentWorker,
  name: K,
  match: (event: WorkerEvents[K]) => boolean = () => true,
): Promise<WorkerEvents[K]> {
  return new Promise((resolve) => {
    const listener = (event: WorkerEvents[K]) => {
      if (!match(event)) return;
      w.events.off(name, listener);
      resolve(event);
    };
    w.events.on(name, listener);
  });
}

/** Every event of `w` from now on, by name, in the order told. */
function told(w: DirigentWorker): (keyof WorkerEvents)[] {
  const names: (keyof WorkerEvents)[] = [];
  const all: (keyof WorkerEvents)[] = [
    'run:started',
    'run:ended',
    'run:taken-over',
    'run:handed-back',
    'run:lost',
    'tool:failed',
    'worker:ready',
    'worker:draining',
    'worker:closed',
    'error',
  ];
  for (const name of all) w.events.on(name, () => void names.push(name));
  return names;
}

/** Starts a run of the project's directive `name` from a client of the deployment. */
async function start(name: string, inputs: Record<string, unknown> = {}): Promise<string> {
  const client = await Dirigent.open({ project, redis: redis.url, prefix: redis.prefix });
  opened.push(client);
  return (await client.start({ directive: name, inputs, trigger: 'api' })).runId;
}

function directive(name: string, xml: string): void {
  writeDirective(join(project, '.ai', 'directives'), name, xml);
}

const bash = (name: string, command: string, extra = '') =>
  `<step name="${name}">${extra}<execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="${command}"/></execute></step>`;

describe('DirigentWorker events', { timeout: 60_000 }, () => {
  it('tells a run it starts and ends, with its record, even when a listener throws', async () => {
    directive(
      'greet',
      `<inputs><input name="who" type="string"/></inputs><process>${bash('hello', 'echo Hello, {input:who}!')}</process><outputs><output name="text" value="\${steps.hello.result.stdout}"/></outputs>`,
    );
    const w = worker();
    const ready = next(w, 'worker:ready');
    w.events.on('run:started', () => {
      throw new Error('a listener that throws');
    });
    const listenerError = next(w, 'error', (e) => e.source === 'listener');
    await w.start();
    expect(await ready).toMatchObject({
      queues: ['runs', 'tools', 'triggers'],
      prefix: redis.prefix,
      names: { runs: w.names.runs, tools: w.names.tools },
    });

    const started = next(w, 'run:started');
    const ended = next(w, 'run:ended');
    const runId = await start('greet', { who: 'Ada' });
    expect(await started).toEqual({
      runId,
      directive: 'greet',
      trigger: 'api',
      worker: w.names.runs,
    });
    expect((await listenerError).error.message).toBe('a listener that throws');
    const end = await ended;
    expect(end).toMatchObject({
      runId,
      directive: 'greet',
      status: 'completed',
      worker: w.names.runs,
    });
    expect(end.record).toMatchObject({
      runId,
      status: 'completed',
      outputs: { text: 'Hello, Ada!\n' },
      steps: [{ name: 'hello', status: 'completed', attempts: 1 }],
    });
  });

  it('tells each failed tool call, whether its failure may be retried, and the failed run', async () => {
    directive(
      'flaky',
      `<process>${bash('boom', 'exit 3', '<retry attempts="2" delay_ms="10"/>')}</process>`,
    );
    directive(
      'missing',
      `<process><step name="read"><execute item_type="tool" item_id="dirigent/fs/read"><param name="file_path" value="no-such-file.txt"/></execute></step></process>`,
    );
    const w = worker({ queues: ['runs', 'tools'] });
    await w.start();
    const failures: WorkerEvents['tool:failed'][] = [];
    w.events.on('tool:failed', (e) => void failures.push(e));

    const flakyEnded = next(w, 'run:ended', (e) => e.directive === 'flaky');
    const flaky = await start('flaky');
    expect((await flakyEnded).record).toMatchObject({
      status: 'failed',
      error: { code: 'COMMAND_FAILED', step: 'boom' },
    });
    // A non-zero exit may be retried: the step tried again, then its policy had no try left.
    expect(failures.map((f) => [f.runId, f.step, f.attempt, f.error.code, f.retryable])).toEqual([
      [flaky, 'boom', 1, 'COMMAND_FAILED', true],
      [flaky, 'boom', 2, 'COMMAND_FAILED', true],
    ]);
    expect(failures[0]).toMatchObject({
      itemId: 'dirigent/shell/bash',
      outcome: 'failed',
      worker: w.names.tools,
      inProcess: true, // the run worker beside it ran the step's call itself
    });

    failures.length = 0;
    const missingEnded = next(w, 'run:ended', (e) => e.directive === 'missing');
    const missing = await start('missing');
    expect((await missingEnded).status).toBe('failed');
    // A missing file will not appear by trying again: one call, not retryable.
    expect(failures).toEqual([
      expect.objectContaining({
        runId: missing,
        step: 'read',
        itemId: 'dirigent/fs/read',
        attempt: 1,
        error: expect.objectContaining({ code: 'FILE_NOT_FOUND' }),
        retryable: false,
      }),
    ]);
  });

  it('hands the runs it drives back when it closes, and another worker resumes them', async () => {
    // The call runs as a tool job on a worker of its own, so the run worker has nothing to wait
    // for when it closes: it hands the run back at once. (The call gives up after 10 s, so that a
    // failed test leaves no job for the closing tool worker to wait for.)
    directive(
      'hold',
      `<process>${bash('hold', 'touch started; for i in $(seq 200); do if [ -e go ]; then break; fi; sleep 0.05; done')}</process>`,
    );
    const tools = worker({ queues: ['tools'] });
    const first = worker({ queues: ['runs'] });
    await Promise.all([tools.start(), first.start()]);
    const firstTold = told(first);
    const runId = await start('hold');
    await waitFor(() => existsSync(join(project, 'started')), { what: 'the call to start' });

    const handedBack = next(first, 'run:handed-back');
    const closing = first.close();
    expect(first.close()).toBe(closing); // closed once, however often asked
    await closing;
    expect(await handedBack).toEqual({ runId, directive: 'hold', worker: first.names.runs });
    expect(firstTold).toEqual([
      'run:started',
      'worker:draining',
      'run:handed-back',
      'worker:closed',
    ]);

    const second = worker({ queues: ['runs'] });
    const ended = next(second, 'run:ended', (e) => e.runId === runId);
    await second.start();
    writeFileSync(join(project, 'go'), '');
    expect((await ended).status).toBe('completed');
  });

  it('tells the takeover of a run whose worker was killed, naming that worker', async () => {
    // The first try of the step never ends (its worker is killed under it); the second does.
    directive(
      'slow',
      `<process>${bash('work', 'if [ -e started ]; then echo again; else touch started; sleep 30; fi')}</process>`,
    );
    const env = { ...defaultWorkerEnv(redis), DIRIGENT_WORKER_LEASE_MS: '1000' };
    const dying = await processes.worker(env, '--queues', 'runs,tools', '--project', project);
    const runId = await start('slow');
    await waitFor(() => existsSync(join(project, 'started')), { what: 'the first try to start' });

    const w = worker({ queues: ['runs', 'tools'] });
    await w.start();
    const takenOver = next(w, 'run:taken-over', (e) => e.runId === runId);
    const ended = next(w, 'run:ended', (e) => e.runId === runId);
    dying.kill('SIGKILL');
    const takeover = await takenOver;
    expect(takeover).toMatchObject({
      runId,
      directive: 'slow',
      worker: w.names.runs,
      cause: 'lease-lapsed',
    });
    expect(takeover.previousWorker).toMatch(/^dirigent-runs\//);
    expect(takeover.previousWorker).not.toBe(w.names.runs);
    const end = await ended;
    expect(end.record).toMatchObject({
      status: 'completed',
      steps: [{ name: 'work', status: 'completed', attempts: 2 }],
    });
  });
});
