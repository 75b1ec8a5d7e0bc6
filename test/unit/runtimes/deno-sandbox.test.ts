import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirigentError } from '../../../src/errors/index.js';
import { readJsToolMetadata } from '../../../src/items/js-tool-metadata.js';
import { DenoSandbox } from '../../../src/runtimes/deno/deno-sandbox.js';
import type { DenoToolCall } from '../../../src/runtimes/deno/deno-tool-call.js';
import { groupAlive } from '../../../src/runtimes/process-group.js';

const FIXTURES = resolve('test/fixtures/deno');

let project: string;
let sandbox: DenoSandbox;
let server: Server;
let serverUrl: string;

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-deno-'));
  sandbox = new DenoSandbox();
  server = createServer((_req, res) => res.end('hello from the test server'));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await sandbox.close();
  await new Promise((done) => server.close(done));
  rmSync(project, { recursive: true, force: true });
});

async function call(
  tool: string,
  input: Record<string, unknown>,
  extra: Partial<DenoToolCall> = {},
  on: DenoSandbox = sandbox,
): Promise<unknown> {
  const file = join(FIXTURES, tool);
  return on.run({
    file,
    itemId: `test/${tool.replace(/\.\w+$/, '')}`,
    meta: await readJsToolMetadata(file),
    input,
    projectDir: project,
    secrets: {},
    signal: new AbortController().signal,
    timeoutMs: 15_000,
    ...extra,
  });
}

async function failure(promise: Promise<unknown>): Promise<DirigentError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DirigentError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

describe('DenoSandbox', () => {
  it('runs a TS tool and serves the next call from the same warm process', async () => {
    let t = performance.now();
    const first = await call('word-count.ts', { text: 'one two  three' });
    const cold = performance.now() - t;
    t = performance.now();
    const second = await call('word-count.ts', { text: 'a b' });
    const warm = performance.now() - t;
    expect(first).toEqual({ words: 3, calls: 1 });
    // The module-level counter goes on: the module was imported once.
    expect(second).toEqual({ words: 2, calls: 2 });
    expect(warm).toBeLessThan(cold);
  });

  it('keeps the protocol intact whatever the tool writes to stdout', async () => {
    // thrower.js writes a forged response line and console output before returning.
    expect(await call('thrower.js', { kind: 'none' })).toEqual({ ok: true });
  });

  it('lets a tool reach a declared host and stops one that declared none', async () => {
    expect(await call('fetch-allowed.ts', { url: serverUrl })).toEqual({
      status: 200,
      body: 'hello from the test server',
    });
    const err = await failure(call('fetch-undeclared.ts', { url: serverUrl }));
    const host = new URL(serverUrl).host;
    expect(err.code).toBe('SANDBOX_DENIED');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain(`refused net access to "${host}"`);
    expect(err.hint).toContain("permissions = { network: ['127.0.0.1'] }");
    expect(err.details).toMatchObject({ kind: 'net', target: host });
  });

  it('lets a tool write inside the project and stops it writing outside', async () => {
    const inside = join(project, 'out.txt');
    expect(await call('write-file.mjs', { path: inside, text: 'kept' })).toEqual({
      written: inside,
    });
    expect(readFileSync(inside, 'utf8')).toBe('kept');

    const outside = join(tmpdir(), `dirigent-outside-${process.pid}-${Date.now()}.txt`);
    const err = await failure(call('write-file.mjs', { path: outside, text: 'escaped' }));
    expect(err.code).toBe('SANDBOX_DENIED');
    expect(err.message).toContain(`refused write access to "${outside}"`);
    expect(err.hint).toContain(project);
    expect(existsSync(outside)).toBe(false);
  });

  it('kills a tool that allocates beyond its memory limit with MEMORY_LIMIT', async () => {
    const err = await failure(call('memory-hog.ts', { mb: 256 }));
    expect(err.code).toBe('MEMORY_LIMIT');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('32 MB');
    expect(err.hint).toContain('limits.memory_mb');
    // The next call gets a fresh process.
    await expect(call('memory-hog.ts', { mb: 1 })).resolves.toEqual({ held: 2 });
  });

  it('times out a hung tool, kills its process group, and replaces the host', async () => {
    const { pid } = (await call('probe.js', { mode: 'pid' })) as { pid: number };
    expect(await groupAlive(pid)).toBe(true);
    const started = performance.now();
    const err = await failure(call('probe.js', { mode: 'hang' }, { timeoutMs: 400 }));
    expect(err.code).toBe('STEP_TIMEOUT');
    expect(err.retryable).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
    expect(await groupAlive(pid)).toBe(false);
    const next = (await call('probe.js', { mode: 'pid' })) as { pid: number };
    expect(next.pid).not.toBe(pid);
  });

  it('stops a call when its signal aborts, with the abort reason', async () => {
    const controller = new AbortController();
    const reason = DirigentError.retryable('STEP_TIMEOUT', 'the step timed out');
    setTimeout(() => controller.abort(reason), 200);
    const err = await failure(call('probe.js', { mode: 'hang' }, { signal: controller.signal }));
    expect(err).toBe(reason);

    const cancelled = new AbortController();
    setTimeout(() => cancelled.abort(), 100);
    const other = await failure(call('probe.js', { mode: 'hang' }, { signal: cancelled.signal }));
    expect(other.code).toBe('CANCELLED');
  });

  it('gives concurrent calls of one tool processes of their own', async () => {
    const [a, b] = (await Promise.all([
      call('probe.js', { mode: 'pid' }),
      call('probe.js', { mode: 'pid' }),
    ])) as Array<{ pid: number }>;
    expect(a!.pid).not.toBe(b!.pid);
  });

  it("streams the tool's output to onLog, never to the protocol", async () => {
    const logged: string[] = [];
    await call('word-count.ts', { text: 'x' }, { onLog: (text) => logged.push(text) });
    expect(logged.join('')).toContain('counting for test/word-count');
    expect(logged.join('')).toContain(`projectPath ${project}`);
  });

  it('passes declared secrets only, in context.secrets, and hides them in errors', async () => {
    const secrets = { API_KEY: 'sk-test-5ecret-value', OTHER_TOKEN: 'not-for-this-tool' };
    expect(await call('secrets.js', {}, { secrets })).toEqual({
      names: ['API_KEY'],
      apiKey: 'sk-test-5ecret-value',
      env: 'NotCapable', // no environment access at all
    });
    const err = await failure(call('secrets.js', { leak: true }, { secrets }));
    expect(err.code).toBe('TOOL_FAILED');
    expect(err.message).toBe('deno tool test/secrets threw Error: bad key ***');
    const reported = JSON.stringify(err.toJSON());
    expect(reported).not.toContain('sk-test-5ecret-value');
    expect(reported).toContain('stderr mentions ***');

    const missing = await failure(call('secrets.js', {}, { secrets: {} }));
    expect(missing.code).toBe('MISSING_SECRET');
    expect(missing.message).toContain('API_KEY');
  });

  it('tells retryable tool errors from fatal ones', async () => {
    const byClass = await failure(call('thrower.js', { kind: 'retryable-class' }));
    expect([byClass.code, byClass.retryable]).toEqual(['TOOL_FAILED', true]);
    const byFlag = await failure(call('thrower.js', { kind: 'retryable-flag' }));
    expect([byFlag.code, byFlag.retryable]).toEqual(['TOOL_FAILED', true]);
    const fatal = await failure(call('thrower.js', { kind: 'fatal' }));
    expect([fatal.code, fatal.retryable]).toEqual(['TOOL_FAILED', false]);
    expect(fatal.message).toContain('TypeError: bad input');
    const notJson = await failure(call('thrower.js', { kind: 'not-json' }));
    expect(notJson.message).toContain('not JSON-serialisable');
    expect(notJson.retryable).toBe(false);
  });

  it('reports a process that exits mid-call as a retryable HOST_CRASHED', async () => {
    const err = await failure(call('thrower.js', { kind: 'exit' }));
    expect(err.code).toBe('HOST_CRASHED');
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('exited with code 3');
    await expect(call('thrower.js', { kind: 'none' })).resolves.toEqual({ ok: true });
  });

  it("runs a RYE-format tool with RYE's arguments and result convention", async () => {
    expect(await call('rye-tool.ts', { action: 'echo' })).toEqual({
      success: true,
      params: { action: 'echo' },
      projectPath: project,
    });
    const err = await failure(call('rye-tool.ts', { action: 'fail' }));
    expect(err.code).toBe('TOOL_FAILED');
    expect(err.message).toContain('asked to fail');
  });

  it('closes idle hosts after the idle time, and none keeps Node alive', async () => {
    // Handles that keep the event loop alive (the test runner has pipes of its own).
    const keepingAlive = () =>
      process.getActiveResourcesInfo().filter((r) => r === 'ProcessWrap' || r === 'PipeWrap');
    const before = keepingAlive();
    const pool = new DenoSandbox({ idleMs: 200 });
    try {
      const { pid } = (await call('probe.js', { mode: 'pid' }, {}, pool)) as { pid: number };
      expect(pool.size).toBe(1);
      expect(keepingAlive()).toEqual(before);
      await new Promise((done) => setTimeout(done, 600));
      expect(pool.size).toBe(0);
      expect(await groupAlive(pid)).toBe(false);
    } finally {
      await pool.close();
    }
  });
});
