/**
 * The HTTP API under test: projects with the directives the API tests run, a server built
 * in-process (`buildApi` + `listen` on a free loopback port) or started as a real `dirigent
 * serve` process, a small JSON client on `fetch`, and a reader of server-sent events. Servers,
 * operations and processes a test opens are closed after it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach } from 'vitest';
import { buildApi, type ApiOptions } from '../../src/api/build-api.js';
import { Dirigent } from '../../src/operations/dirigent.js';
import type { DirigentOptions } from '../../src/operations/dirigent-options.js';
import { writeDirective } from './directive-file.js';
import { CLI_MAIN } from './paths.js';

/** The token the test servers accept. */
export const TOKEN = 'api-test-token-0123456789abcdef';

/**
 * A temporary project whose `.ai/directives/` holds: `hello` (input `who`, one render step),
 * `typed` (three typed inputs), `slow` (sleeps `ms`, default 3 s), `gate` (a step, a
 * `<wait signal="go"/>`, a step), `steps` (three steps of 300 ms), and `count` (appends a line
 * to `side-effects.log` in the project: a side effect to count).
 */
export function apiProject(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-api-'));
  const directives = join(dir, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeDirective(
    directives,
    'hello',
    `<inputs><input name="who" type="string" required="true"/></inputs>
  <process><step name="greet"><render>Hello \${inputs.who}</render></step></process>
  <outputs><output name="said" value="\${steps.greet.result}"/></outputs>`,
  );
  writeDirective(
    directives,
    'typed',
    `<inputs>
    <input name="count" type="integer" required="true"/>
    <input name="name" type="string" required="true"/>
    <input name="flag" type="boolean"/>
  </inputs>
  <process><step name="say"><render>\${inputs.name}</render></step></process>`,
  );
  writeDirective(
    directives,
    'slow',
    `<inputs><input name="ms" type="integer" default="3000"/></inputs>
  <process><step name="nap"><execute item_type="tool" item_id="dirigent/util/sleep"><param name="ms" value="\${inputs.ms}"/></execute></step></process>`,
  );
  writeDirective(
    directives,
    'gate',
    `<process>
    <step name="before"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo one"/></execute></step>
    <step name="hold"><wait signal="go"/></step>
    <step name="after"><execute item_type="tool" item_id="dirigent/util/sleep"><param name="ms" value="400"/></execute></step>
  </process>
  <outputs><output name="got" value="\${steps.hold.result}"/></outputs>`,
  );
  writeDirective(
    directives,
    'steps',
    `<process>
    <step name="a"><execute item_type="tool" item_id="dirigent/util/sleep"><param name="ms" value="400"/></execute></step>
    <step name="b"><execute item_type="tool" item_id="dirigent/util/sleep"><param name="ms" value="400"/></execute></step>
    <step name="c"><execute item_type="tool" item_id="dirigent/util/sleep"><param name="ms" value="400"/></execute></step>
  </process>`,
  );
  writeDirective(
    directives,
    'count',
    `<inputs><input name="order" type="string"/></inputs>
  <process><step name="once"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="sleep 0.2; echo ran >> side-effects.log"/></execute></step></process>`,
  );
  return dir;
}

/** Writes `.ai/config/dirigent.yaml` of `project` with these input limits. */
export function limitProject(project: string, limits: Record<string, number>): void {
  mkdirSync(join(project, '.ai', 'config'), { recursive: true });
  const lines = Object.entries(limits).map(([k, v]) => `  ${k}: ${v}`);
  writeFileSync(join(project, '.ai', 'config', 'dirigent.yaml'), `limits:\n${lines.join('\n')}\n`);
}

/** A server listening in this process, with the operations under it. */
export interface TestApi {
  url: string;
  app: FastifyInstance;
  dirigent: Dirigent;
}

/** A response as the client reads it. */
export interface ApiResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** Sets up servers, temp projects and `dirigent serve` processes; call at the top of a file. */
export function apiServers() {
  let open: TestApi[] = [];
  let folders: string[] = [];
  let children: ChildProcess[] = [];
  afterEach(async () => {
    const live = children.filter((p) => p.exitCode === null && p.signalCode === null);
    const exited = live.map((p) => new Promise((r) => p.once('exit', r)));
    for (const p of live) p.kill('SIGKILL');
    await Promise.all(exited);
    for (const api of open) {
      await api.app.close();
      await api.dirigent.close();
    }
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
    open = [];
    folders = [];
    children = [];
  });

  return {
    /** A temporary project (see {@link apiProject}), removed after the test. */
    project(): string {
      const dir = apiProject();
      folders.push(dir);
      return dir;
    },

    /** Opens the operations on `project` and serves them on a free loopback port. */
    async listen(
      open_: DirigentOptions & { project: string },
      options: Partial<ApiOptions> = {},
    ): Promise<TestApi> {
      const dirigent = await Dirigent.open(open_);
      const app = await buildApi(dirigent, { tokens: [TOKEN], ...options });
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      const api = { url: address, app, dirigent };
      open.push(api);
      return api;
    },

    /**
     * `dirigent serve …args` as a real process, resolved with its URL once it listens (its start
     * line on stderr), or rejected with its output when it exits first.
     */
    serve(
      env: NodeJS.ProcessEnv,
      ...args: string[]
    ): Promise<{ url: string; child: ChildProcess; stderr: () => string }> {
      const child = spawn(process.execPath, [CLI_MAIN, 'serve', ...args], {
        env: { DIRIGENT_LOG_LEVEL: 'warn', ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      children.push(child);
      let err = '';
      return new Promise((served, failed) => {
        child.stderr!.on('data', (c: Buffer) => {
          err += c.toString();
          const m = /listening on (http:\/\/\S+)/.exec(err);
          if (m) served({ url: m[1]!, child, stderr: () => err });
        });
        child.once('exit', (code) => failed(new Error(`serve exited (${code}): ${err}`)));
      });
    },

    /** `dirigent serve …args` run to its exit: its code and stderr. */
    serveExit(
      env: NodeJS.ProcessEnv,
      ...args: string[]
    ): Promise<{ code: number | null; stderr: string }> {
      const child = spawn(process.execPath, [CLI_MAIN, 'serve', ...args], {
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      children.push(child);
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      return new Promise((done) => child.once('exit', (code) => done({ code, stderr })));
    },
  };
}

/** A JSON client of `url` that sends `token` (none when null). */
export function apiClient(url: string, token: string | null = TOKEN) {
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse> => {
    const res = await fetch(url + path, {
      method,
      headers: {
        ...(token !== null && { authorization: `Bearer ${token}` }),
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return { status: res.status, headers: res.headers, body: parsed };
  };
  return {
    get: (path: string, headers?: Record<string, string>) => call('GET', path, undefined, headers),
    post: (path: string, body?: unknown, headers?: Record<string, string>) =>
      call('POST', path, body, headers),
    call,
  };
}

/** One server-sent event. */
export interface SseEvent {
  event: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any;
}

/**
 * Opens `url`'s event stream with `token` and reads it: `events` fill in as they come, `comments`
 * count comment lines, `ended` resolves when the server ends the stream, and `abort()` hangs up.
 */
export async function openEvents(url: string, token: string = TOKEN) {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const ended = (async () => {
    if (!res.ok || res.body === null) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length > 0) events.push({ event, data: JSON.parse(data.join('\n')) });
        }
      }
    } catch (err) {
      if (!controller.signal.aborted) throw err;
    }
  })();
  return { response: res, events, comments, ended, abort: () => controller.abort() };
}
