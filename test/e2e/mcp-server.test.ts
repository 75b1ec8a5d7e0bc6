/**
 * `dirigent mcp`, driven by the official MCP SDK client as an agent would, over stdio and over
 * streamable HTTP: exactly four tools; search, load, execute (a directive that waits on an
 * instruction, completed by a second execute with the answer) and sign; failures are tool errors
 * with the engine's codes, and the server goes on serving.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateSigningKey, writeTrustedKey } from '../../src/items/signing/index.js';
import { writeDirective } from '../support/directive-file.js';
import { CLI_MAIN } from '../support/paths.js';

const TOKEN = 'mcp-test-token-0123456789';

let project: string;
let home: string;
let env: NodeJS.ProcessEnv;
let server: ChildProcess | undefined;
let client: Client | undefined;

const write = (file: string, text: string) => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
};

beforeEach(async () => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-mcp-'));
  home = mkdtempSync(join(tmpdir(), 'dirigent-mcp-home-'));
  const userSpace = join(home, '.ai');
  const keys = join(home, 'keys');
  env = {
    ...process.env,
    DIRIGENT_USER_SPACE: userSpace,
    DIRIGENT_SIGNING_KEY_DIR: keys,
    DIRIGENT_API_TOKENS: TOKEN,
    REDIS_URL: '',
  };
  const key = generateSigningKey();
  mkdirSync(keys, { recursive: true, mode: 0o700 });
  writeFileSync(join(keys, 'private_key.pem'), key.privateKeyPem, { mode: 0o600 });
  writeFileSync(join(keys, 'public_key.pem'), key.publicKeyPem, { mode: 0o644 });
  chmodSync(keys, 0o700);
  await writeTrustedKey(userSpace, key.publicKeyPem, 'tester');
  write(
    join(project, '.ai', 'knowledge', 'ops', 'deploys.md'),
    '---\nname: deploys\ntitle: How we deploy\ndescription: Rules for shipping releases to production\ncategory: ops\nversion: "1.0.0"\n---\n\n# How we deploy\n\nOn weekdays.\n',
  );
  mkdirSync(join(project, '.ai', 'directives'), { recursive: true });
  writeDirective(
    join(project, '.ai', 'directives'),
    'approve',
    `<inputs><input name="change" type="string" required="true">what ships</input></inputs>
    <process><step name="ask"><instruction>Ship {input:change}?</instruction></step>
    <step name="say"><render>answer: \${steps.ask.result}</render></step></process>
    <outputs><output name="said" expr="steps.say.result"/></outputs>`,
  );
  writeDirective(
    join(project, '.ai', 'directives'),
    'typed_approve',
    `<process><step name="ask"><instruction>Ship it?
      <answer name="approved" type="boolean" required="true">Whether it ships</answer>
      <answer name="reason" type="string"/>
    </instruction></step></process>
    <outputs><output name="approved" value="\${steps.ask.result.approved}"/></outputs>`,
  );
});

afterEach(async () => {
  await client?.close();
  client = undefined;
  if (server && server.exitCode === null) {
    // Done with it: how the server drains on SIGTERM has a test of its own.
    const exited = new Promise((r) => server!.once('exit', r));
    server.kill('SIGKILL');
    await exited;
  }
  server = undefined;
  rmSync(project, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

/** Starts `dirigent mcp --http` on a free port; resolves with its URL once it listens. */
async function httpServer(): Promise<URL> {
  const child = spawn(
    process.execPath,
    [CLI_MAIN, 'mcp', '--http', '--full-access', '--port', '0', '--project', project],
    { env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  server = child;
  return new Promise((listening, failed) => {
    let err = '';
    child.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) listening(new URL(m[1]!));
    });
    child.once('exit', (code) => failed(new Error(`dirigent mcp exited (${code}): ${err}`)));
  });
}

const transports: Record<string, () => Promise<Transport>> = {
  stdio: async () =>
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI_MAIN, 'mcp', '--project', project],
      env: env as Record<string, string>,
      stderr: 'pipe',
    }),
  'streamable HTTP': async () =>
    new StreamableHTTPClientTransport(await httpServer(), {
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
    }),
};

type ToolAnswer = { isError?: boolean; structuredContent?: Record<string, unknown> };

async function call(name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
  return (await client!.callTool({ name, arguments: args })) as ToolAnswer;
}

describe.each(Object.keys(transports))('dirigent mcp over %s', (via) => {
  beforeEach(async () => {
    client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(await transports[via]!());
  });

  it('lists exactly the four tools, with their schemas', async () => {
    const { tools } = await client!.listTools();
    expect(tools.map((t) => t.name)).toEqual(['search', 'load', 'execute', 'sign']);
    const execute = tools.find((t) => t.name === 'execute')!;
    expect(execute.inputSchema.required).toEqual(['item_type', 'item_id']);
    expect(Object.keys(execute.inputSchema.properties!)).toEqual(
      expect.arrayContaining(['item_type', 'item_id', 'project_path', 'parameters', 'dry_run']),
    );
  });

  it('searches, loads, drives a directive through its instruction, and signs', async () => {
    const found = await call('search', { query: 'shiping', item_type: 'knowledge' });
    expect(found.isError).toBeFalsy();
    expect(found.structuredContent!.results).toEqual([
      expect.objectContaining({ item_id: 'ops/deploys', item_type: 'knowledge', space: 'project' }),
    ]);

    const loaded = await call('load', { item_type: 'knowledge', item_id: 'ops/deploys' });
    expect(loaded.structuredContent).toMatchObject({
      status: 'success',
      signature: { status: 'unsigned' },
      content: expect.stringContaining('On weekdays.'),
    });

    const waiting = await call('execute', {
      item_type: 'directive',
      item_id: 'approve',
      parameters: { change: 'v2' },
    });
    expect(waiting.structuredContent).toMatchObject({
      status: 'waiting',
      waiting: [{ step: 'ask', instruction: 'Ship v2?' }],
    });
    const runId = waiting.structuredContent!.run_id as string;
    const done = await call('execute', {
      item_type: 'directive',
      item_id: 'approve',
      run_id: runId,
      answer: 'yes',
    });
    expect(done.structuredContent).toMatchObject({
      status: 'completed',
      run_id: runId,
      outputs: { said: 'answer: yes' },
    });

    const signed = await call('sign', { item_type: 'knowledge', item_id: 'ops/deploys' });
    expect(signed.isError, JSON.stringify(signed.structuredContent)).toBeFalsy();
    expect(signed.structuredContent).toMatchObject({ status: 'signed', item_id: 'ops/deploys' });
    const verified = await call('load', { item_type: 'knowledge', item_id: 'ops/deploys' });
    expect(verified.structuredContent).toMatchObject({
      signature: { status: 'verified', owner: 'tester' },
    });
  });

  it("gives a typed instruction's answer schema, refuses an answer that does not match as a tool error, then takes one that does", async () => {
    const waiting = await call('execute', { item_type: 'directive', item_id: 'typed_approve' });
    const schema = {
      type: 'object',
      properties: {
        approved: { type: 'boolean', description: 'Whether it ships' },
        reason: { type: 'string' },
      },
      required: ['approved'],
      additionalProperties: false,
    };
    expect(waiting.structuredContent).toMatchObject({
      status: 'waiting',
      waiting: [{ step: 'ask', instruction: 'Ship it?', answer_schema: schema }],
      next: expect.stringContaining(
        'The answer is an object with approved (boolean, required) and reason (string), e.g. {"approved":true,"reason":"…"}',
      ),
    });
    const runId = waiting.structuredContent!.run_id as string;
    const answer = (given: unknown) =>
      call('execute', {
        item_type: 'directive',
        item_id: 'typed_approve',
        run_id: runId,
        answer: given,
      });
    const refused = await answer({ approved: 'sure', why: 1 });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toEqual({
      error: expect.objectContaining({
        code: 'INVALID_PAYLOAD',
        problems: [
          'unknown field "why" (declared: approved, reason)',
          'field "approved" must be a boolean, got "sure"',
        ],
      }),
    });
    const done = await answer({ approved: true });
    expect(done.structuredContent).toMatchObject({
      status: 'completed',
      outputs: { approved: true },
    });
  });

  it('answers failures as tool errors with the engine code, and goes on serving', async () => {
    const unknown = await call('execute', { item_type: 'tool', item_id: 'no/such/tool' });
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent).toMatchObject({ error: { code: 'UNKNOWN_TOOL' } });
    const bad = await call('execute', { item_type: 'spell', item_id: 'x' });
    expect(bad.structuredContent).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
    const elsewhere = await call('load', {
      item_type: 'knowledge',
      item_id: 'ops/deploys',
      project_path: '/etc',
    });
    expect(elsewhere.structuredContent).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
    const system = await call('sign', { item_type: 'tool', item_id: 'x', source: 'system' });
    expect(system.isError).toBe(true);
    expect((await client!.listTools()).tools).toHaveLength(4);
  });
});

describe('dirigent mcp --http', () => {
  it('refuses a request without a valid bearer token', async () => {
    const url = await httpServer();
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
  });

  it('closes within a moment on SIGTERM while a client stays connected', async () => {
    const url = await httpServer();
    client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
      }),
    );
    expect((await client.listTools()).tools).toHaveLength(4);
    // A connection opened and never used: Node counts it as busy, not idle, until it is ended.
    const spare = connect(Number(url.port), url.hostname);
    await new Promise((r) => spare.once('connect', r));
    const exited = new Promise<number | null>((r) => server!.once('exit', r));
    const asked = Date.now();
    server!.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - asked).toBeLessThan(1500);
    spare.destroy();
  });
});
