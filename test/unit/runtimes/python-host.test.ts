/** The warm Python host pool, with real Python processes. */
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirigentError, ErrorCode } from '../../../src/errors/index.js';
import { readPythonToolMetadata } from '../../../src/items/python-tool-metadata.js';
import { groupAlive } from '../../../src/runtimes/process-group.js';
import {
  PythonHostPool,
  type PythonHostCall,
} from '../../../src/runtimes/python-host/python-host-pool.js';
import { resolvePython } from '../../../src/runtimes/python-interpreter.js';
import { spawnPythonTool } from '../../../bench/spawn-python-tool.js';
import { waitFor } from '../../support/wait-for.js';
import { rejection } from '../tools/helpers.js';

const FIXTURES = resolve('test/fixtures/python-host');
const fixture = (name: string) => join(FIXTURES, name);

let python: string;
let project: string;
const pools: PythonHostPool[] = [];

function pool(size = 2): PythonHostPool {
  const p = new PythonHostPool({ size });
  pools.push(p);
  return p;
}

function call(
  file: string,
  params: Record<string, unknown> = {},
  extra: Partial<PythonHostCall> = {},
): PythonHostCall {
  return {
    python,
    file,
    itemId: `test/${file.split('/').pop()!.replace(/\.py$/, '')}`,
    params,
    projectDir: project,
    signal: new AbortController().signal,
    timeoutMs: 10_000,
    ...extra,
  };
}

/** Gone, or a zombie waiting to be reaped (dead all the same). */
function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

beforeAll(async () => {
  python = await resolvePython(process.cwd());
  project = mkdtempSync(join(tmpdir(), 'dirigent-python-host-'));
});

afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
  rmSync(project, { recursive: true, force: true });
});

describe('PythonHostPool', () => {
  it('calls a RYE tool with params and the project path, in the project directory', async () => {
    const p = pool();
    const result = await p.call(call(fixture('rye_tool.py'), { text: 'abc' }));
    expect(result).toMatchObject({ success: true, upper: 'ABC', project, cwd: project });
    const again = (await p.call(call(fixture('rye_tool.py'), { text: 'x' }))) as { pid: number };
    expect(again.pid).toBe((result as { pid: number }).pid);
    expect(p.stats()).toMatchObject({ started: 1, replaced: 0, alive: 1 });
  });

  it("turns RYE's success: false into a TOOL_FAILED that keeps its retryable flag", async () => {
    const err = await rejection(pool().call(call(fixture('rye_tool.py'), { fail: true })));
    expect(err.code).toBe(ErrorCode.TOOL_FAILED);
    expect(err.message).toContain('asked to fail');
    expect(err.retryable).toBe(true);
  });

  it('awaits the async execute(params) of the seed format', async () => {
    const p = pool();
    expect(await p.call(call(fixture('seed_tool.py'), { name: 'Ada' }, { format: 'seed' }))).toBe(
      'hello Ada',
    );
    expect(await p.call(call(fixture('seed_tool.py'), { name: 'Bo' }, { format: 'seed' }))).toBe(
      'hello Bo',
    );
  });

  it('returns the right result whatever the tool and its subprocesses print', async () => {
    const p = pool(1);
    for (let i = 0; i < 3; i++) {
      expect(await p.call(call(fixture('noisy_tool.py')))).toEqual({ success: true, answer: 42 });
    }
  });

  it('reloads a tool edited between calls', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dirigent-python-edit-'));
    try {
      const file = join(dir, 'edited.py');
      const version = (n: number) => `def execute(params, project_path):\n    return ${n}\n`;
      const p = pool(1);
      writeFileSync(file, version(1));
      expect(await p.call(call(file))).toBe(1);
      expect(await p.call(call(file))).toBe(1);
      writeFileSync(file, version(22)); // a new size
      expect(await p.call(call(file))).toBe(22);
      writeFileSync(file, version(33)); // the same size: only the mtime tells
      const later = new Date(Date.now() + 5000);
      utimesSync(file, later, later);
      expect(await p.call(call(file))).toBe(33);
      expect(p.stats().started).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects with HOST_CRASHED when the host dies, and runs the next call on a new host', async () => {
    const p = pool(1);
    const first = (await p.call(call(fixture('rye_tool.py')))) as { pid: number };
    const err = await rejection(p.call(call(fixture('crash_tool.py'))));
    expect(err.code).toBe(ErrorCode.HOST_CRASHED);
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('test/crash_tool');
    expect(err.message).toContain('exited with code 3');
    expect(err.message).toContain('about to crash');
    const next = (await p.call(call(fixture('rye_tool.py'), { text: 'ok' }))) as { pid: number };
    expect(next).toMatchObject({ upper: 'OK' });
    expect(next.pid).not.toBe(first.pid);
    expect(p.stats()).toMatchObject({ started: 2, replaced: 1, alive: 1 });
  });

  it('times out with STEP_TIMEOUT and kills the whole process group', async () => {
    const p = pool(1);
    const pidFile = join(project, 'hang.json');
    const started = Date.now();
    const err = await rejection(
      p.call(call(fixture('hang_tool.py'), { pid_file: pidFile }, { timeoutMs: 1000 })),
    );
    expect(err.code).toBe(ErrorCode.STEP_TIMEOUT);
    expect(err.retryable).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
    const { child, pgid } = JSON.parse(readFileSync(pidFile, 'utf8')) as {
      child: number;
      pgid: number;
    };
    expect(await groupAlive(pgid)).toBe(false);
    await waitFor(() => processGone(child), { what: "the tool's child process to be gone" });
    await waitFor(() => processGone(pgid), { what: 'the host process to be gone' });
    expect(await p.call(call(fixture('rye_tool.py'), { text: 'after' }))).toMatchObject({
      upper: 'AFTER',
    });
    expect(p.stats()).toMatchObject({ started: 2, replaced: 1 });
  });

  it('rejects with the abort reason and kills the host', async () => {
    const p = pool(1);
    const pidFile = join(project, 'abort.json');
    const controller = new AbortController();
    const reason = DirigentError.fatal(ErrorCode.CANCELLED, 'stopped by the test');
    const pending = p.call(
      call(fixture('hang_tool.py'), { pid_file: pidFile }, { signal: controller.signal }),
    );
    await waitFor(() => existsSync(pidFile), { what: 'the tool to write its pid file' });
    controller.abort(reason);
    expect(await rejection(pending)).toBe(reason);
    const { pgid } = JSON.parse(readFileSync(pidFile, 'utf8')) as { pgid: number };
    expect(await groupAlive(pgid)).toBe(false);
  });

  it('rejects a queued call with the abort reason without running it', async () => {
    const p = pool(1);
    const busy = p.call(call(fixture('timing_tool.py'), { seconds: 0.3 }));
    const controller = new AbortController();
    const queued = p.call(call(fixture('rye_tool.py'), {}, { signal: controller.signal }));
    expect(p.stats().queued).toBe(1);
    controller.abort();
    const err = await rejection(queued);
    expect(err.code).toBe(ErrorCode.CANCELLED);
    await busy;
    expect(p.stats()).toMatchObject({ started: 1, replaced: 0, queued: 0 });
  });

  it('runs two calls at once on a pool of two', async () => {
    const p = pool(2);
    type Timed = { start: number; end: number; pid: number };
    const [a, b] = (await Promise.all([
      p.call(call(fixture('timing_tool.py'), { seconds: 0.4 })),
      p.call(call(fixture('timing_tool.py'), { seconds: 0.4 })),
    ])) as [Timed, Timed];
    expect(a.pid).not.toBe(b.pid);
    expect(a.start < b.end && b.start < a.end).toBe(true);
  });

  it('queues calls first in, first out when every host is busy', async () => {
    const p = pool(1);
    const order: number[] = [];
    await Promise.all(
      [1, 2, 3].map((n) =>
        p.call(call(fixture('timing_tool.py'), { seconds: 0.05 })).then(() => order.push(n)),
      ),
    );
    expect(order).toEqual([1, 2, 3]);
    expect(p.stats().started).toBe(1);
  });

  it('sets env for one call only', async () => {
    const p = pool(1);
    const env = { DIRIGENT_TEST_SECRET: 's3cret' };
    expect(await p.call(call(fixture('env_tool.py'), {}, { env }))).toMatchObject({
      secret: 's3cret',
    });
    expect(await p.call(call(fixture('env_tool.py')))).toMatchObject({ secret: null });
  });

  it('makes exceptions TOOL_FAILED, retryable when the exception says so', async () => {
    const p = pool(1);
    const flaky = await rejection(p.call(call(fixture('raise_tool.py'), { kind: 'flaky' })));
    expect(flaky.code).toBe(ErrorCode.TOOL_FAILED);
    expect(flaky.retryable).toBe(true);
    expect(flaky.message).toContain('Flaky: try me again');
    expect(flaky.details).toMatchObject({ type: 'Flaky', message: 'try me again' });
    expect(flaky.details?.traceback).toContain('raise Flaky');
    const timeout = await rejection(p.call(call(fixture('raise_tool.py'), { kind: 'timeout' })));
    expect(timeout.retryable).toBe(true);
    const bad = await rejection(p.call(call(fixture('raise_tool.py'), { kind: 'value' })));
    expect(bad.retryable).toBe(false);
    expect(bad.details).toMatchObject({ type: 'ValueError' });
    const exit = await rejection(p.call(call(fixture('raise_tool.py'), { kind: 'exit' })));
    expect(exit.details).toMatchObject({ type: 'SystemExit' });
    expect(p.stats()).toMatchObject({ started: 1, replaced: 0 });
  });

  it('gives a fatal RUNTIME_UNAVAILABLE when the interpreter is missing or not Python', async () => {
    const p = pool(1);
    const missing = await rejection(
      p.call(call(fixture('rye_tool.py'), {}, { python: join(project, 'no-such-python') })),
    );
    expect(missing.code).toBe(ErrorCode.RUNTIME_UNAVAILABLE);
    expect(missing.retryable).toBe(false);
    const fake = join(project, 'fake-python');
    writeFileSync(fake, '#!/bin/sh\necho "not python" >&2\nexit 1\n', { mode: 0o755 });
    const notPython = await rejection(p.call(call(fixture('rye_tool.py'), {}, { python: fake })));
    expect(notPython.code).toBe(ErrorCode.RUNTIME_UNAVAILABLE);
    expect(notPython.retryable).toBe(false);
    expect(notPython.message).toContain('before it was ready');
    expect(notPython.message).toContain('not python');
  });

  it('rejects calls in flight and after close with CANCELLED', async () => {
    const p = pool(1);
    const pending = p.call(call(fixture('timing_tool.py'), { seconds: 5 }));
    await waitFor(() => p.stats().alive === 1 && p.stats().queued === 0, {
      what: 'a host to take the call',
    });
    await p.close();
    await p.close();
    expect((await rejection(pending)).code).toBe(ErrorCode.CANCELLED);
    expect((await rejection(p.call(call(fixture('rye_tool.py'))))).code).toBe(ErrorCode.CANCELLED);
    expect(p.stats().alive).toBe(0);
  });
});

describe('the warm host against a process per call (the benchmark baseline)', () => {
  const toolCall = async (file: string, params: Record<string, unknown>) => ({
    python,
    file: fixture(file),
    itemId: 'test/tool',
    meta: await readPythonToolMetadata(fixture(file), python),
    params,
    projectDir: project,
    signal: new AbortController().signal,
    timeoutMs: 10_000,
  });

  const onHost = async (p: PythonHostPool, file: string, params: Record<string, unknown>) => {
    const c = await toolCall(file, params);
    return p.call({ ...c, format: c.meta.format });
  };

  it('gives the results of a spawned harness', async () => {
    const p = pool(1);
    const warm = await onHost(p, 'rye_tool.py', { text: 'hi' });
    const spawned = await spawnPythonTool({
      ...(await toolCall('rye_tool.py', { text: 'hi' })),
      env: { PYTHONDONTWRITEBYTECODE: '1' }, // no __pycache__ among the fixtures
    });
    expect({ ...(warm as object), pid: 0 }).toEqual({ ...(spawned as object), pid: 0 });
    expect(await onHost(p, 'seed_tool.py', { name: 'Cy' })).toBe('hello Cy');
    expect(p.stats().started).toBe(1);
    const failed = await rejection(onHost(p, 'rye_tool.py', { fail: 1 }));
    expect(failed.code).toBe(ErrorCode.TOOL_FAILED);
  });
});
