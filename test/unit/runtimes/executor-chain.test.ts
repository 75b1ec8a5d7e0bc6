/**
 * Executor chains as data: tools name runtimes, runtimes name primitives, across the project, user
 * and system spaces; chains are validated; the subprocess and HTTP primitives run what the chain
 * configures; secrets reach only the tools that declare them and never come back out.
 */
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ItemResolver } from '../../../src/items/item-resolver.js';
import { SYSTEM_SPACE_ROOT, type Space, type SpaceName } from '../../../src/items/space.js';
import { ItemDispatcher } from '../../../src/tools/item-dispatcher.js';
import { alive } from '../../support/process-alive.js';
import { caller, rejection } from '../tools/helpers.js';

let base: string;
let project: string;
let resolver: ItemResolver;
let dispatcher: ItemDispatcher;
let server: Server;
let url: string;
const env = { API_TOKEN: 'tok-123456789', OTHER_SECRET: 'other-987654321' };

function put(space: SpaceName, path: string, text: string): string {
  const root = space === 'project' ? join(project, '.ai') : join(base, space, '.ai');
  const file = join(root, 'tools', path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  resolver.invalidate();
  return file;
}

const yamlTool = (executor: string, rest = '') =>
  `version: 1.0.0\ntool_type: yaml\nexecutor_id: ${executor}\ndescription: test\n${rest}`;
const runtime = (executor: string, rest = '') =>
  `version: 1.0.0\ntool_type: runtime\nexecutor_id: ${executor}\ndescription: test runtime\n${rest}`;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'dirigent-chain-'));
  project = join(base, 'project');
  mkdirSync(project);
  // A system space of our own: the shipped runtimes and primitives, plus test items.
  cpSync(SYSTEM_SPACE_ROOT, join(base, 'system', '.ai'), { recursive: true });
  const spaces: Space[] = [
    { name: 'project', root: join(project, '.ai') },
    { name: 'user', root: join(base, 'user', '.ai') },
    { name: 'system', root: join(base, 'system', '.ai') },
  ];
  resolver = new ItemResolver(spaces);
  dispatcher = new ItemDispatcher(resolver, {
    env,
    secretsFile: join(base, 'secrets.env'),
  });
  server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (u.pathname === '/status') {
        res.writeHead(Number(u.searchParams.get('code')), { 'content-type': 'text/plain' });
        res.end('status page');
      } else if (u.pathname === '/slow') {
        setTimeout(() => res.end('late'), 3000).unref();
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            method: req.method,
            path: u.pathname,
            query: u.search,
            auth: req.headers.authorization,
            body,
          }),
        );
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await dispatcher.close();
  resolver.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(base, { recursive: true, force: true });
});

const call = caller(
  () => dispatcher,
  () => project,
);

describe('executor chains', () => {
  it('runs a YAML tool on RYE bash_runtime, templating {param} into the command', async () => {
    put(
      'project',
      'greet.yaml',
      yamlTool(
        'rye/core/runtimes/bash_runtime',
        `config:\n  command: 'echo "hello {name}" from $(basename "$2")'\nconfig_schema:\n  type: object\n  properties: { name: { type: string, default: World } }\n`,
      ),
    );
    await expect(call('greet', {})).resolves.toMatchObject({
      stdout: `hello World from project\n`,
      return_code: 0,
    });
  });

  it('runs a YAML tool straight on the subprocess primitive; its JSON output is the result', async () => {
    put(
      'project',
      'double.yaml',
      yamlTool(
        'rye/core/primitives/subprocess',
        `config:\n  command: \${RYE_NODE}\n  args: ['-e', 'console.log(JSON.stringify({twice: Number(process.argv[1]) * 2}))', '{n}']\nconfig_schema: { type: object, properties: { n: { type: integer } }, required: [n] }\n`,
      ),
    );
    await expect(call('double', { n: '21' })).resolves.toEqual({ twice: 42 });
  });

  it('follows a chain down the spaces: project tool → project runtime → user runtime → system primitive', async () => {
    put('project', 'chained.yaml', yamlTool('team/runtimes/outer', 'config:\n  word: chained\n'));
    put('project', 'team/runtimes/outer.yaml', runtime('team/runtimes/inner'));
    put(
      'user',
      'team/runtimes/inner.yaml',
      runtime(
        'rye/core/primitives/subprocess',
        "config:\n  command: /bin/echo\n  args: ['{word}', '{project_path}']\n",
      ),
    );
    const chain = await dispatcher.chainOf('chained', project);
    expect(chain.map((l) => [l.itemId, l.space])).toEqual([
      ['chained', 'project'],
      ['team/runtimes/outer', 'project'],
      ['team/runtimes/inner', 'user'],
      ['rye/core/primitives/subprocess', 'system'],
    ]);
    await expect(call('chained')).resolves.toMatchObject({ stdout: `chained ${project}\n` });
  });

  it('shadows across all three spaces: project over user over system', async () => {
    const echo = (who: string) =>
      yamlTool(
        'rye/core/primitives/subprocess',
        `config:\n  command: /bin/echo\n  args: ['${who}']\n`,
      );
    put('system', 'shared/who.yaml', echo('system'));
    await expect(call('shared/who')).resolves.toMatchObject({ stdout: 'system\n' });
    const user = put('user', 'shared/who.yaml', echo('user'));
    await expect(call('shared/who')).resolves.toMatchObject({ stdout: 'user\n' });
    const mine = put('project', 'shared/who.yaml', echo('project'));
    await expect(call('shared/who')).resolves.toMatchObject({ stdout: 'project\n' });
    const resolution = await resolver.resolve('tool', 'shared/who');
    expect(resolution.shadowed.map((s) => s.space)).toEqual(['user', 'system']);
    unlinkSync(mine);
    unlinkSync(user);
    resolver.invalidate();
    await expect(call('shared/who')).resolves.toMatchObject({ stdout: 'system\n' });
  });

  it('never resolves a runtime upward: a system or user item cannot use a project runtime', async () => {
    put(
      'project',
      'hijack/runtime.yaml',
      runtime('rye/core/primitives/subprocess', 'config:\n  command: /bin/echo\n'),
    );
    put('system', 'locked.yaml', yamlTool('hijack/runtime'));
    put('user', 'mine.yaml', yamlTool('hijack/runtime'));
    for (const id of ['locked', 'mine']) {
      const err = await rejection(call(id));
      expect(err.code).toBe('CHAIN_UPWARD');
      expect(err.message).toContain('only in the project space');
    }
  });

  it('refuses cycles, chains longer than 10 links, missing runtimes and unknown primitives', async () => {
    put('project', 'loop/a.yaml', runtime('loop/b'));
    put('project', 'loop/b.yaml', runtime('loop/a'));
    put('project', 'loops.yaml', yamlTool('loop/a'));
    const cycle = await rejection(call('loops'));
    expect(cycle.code).toBe('CHAIN_CYCLE');
    expect(cycle.message).toContain('loops → loop/a → loop/b → loop/a');

    for (let i = 0; i < 11; i++) put('project', `deep/r${i}.yaml`, runtime(`deep/r${i + 1}`));
    put('project', 'deep/r11.yaml', runtime('rye/core/primitives/subprocess'));
    put('project', 'deep.yaml', yamlTool('deep/r0'));
    expect((await rejection(call('deep'))).code).toBe('CHAIN_TOO_DEEP');

    put('project', 'orphan.yaml', yamlTool('no/such/runtime'));
    const missing = await rejection(call('orphan'));
    expect(missing.code).toBe('EXECUTOR_NOT_FOUND');
    expect(missing.location?.file).toContain('orphan.yaml');

    put(
      'project',
      'fake/primitive.yaml',
      'tool_type: primitive\nexecutor_id: null\ndescription: x\n',
    );
    put('project', 'fake.yaml', yamlTool('fake/primitive'));
    expect((await rejection(call('fake'))).code).toBe('UNKNOWN_PRIMITIVE');
  });

  it("runs RYE's JS tools as node scripts (node_runtime), parameters on stdin", async () => {
    put(
      'project',
      'rye/sum.js',
      [
        'export const __version__ = "1.0.0";',
        'export const __tool_type__ = "javascript";',
        'export const __executor_id__ = "rye/core/runtimes/node_runtime";',
        'export const __tool_description__ = "adds";',
        'export const CONFIG_SCHEMA = { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] };',
        'let input = "";',
        'process.stdin.on("data", (c) => (input += c));',
        'process.stdin.on("end", () => {',
        '  const p = JSON.parse(input);',
        '  const project = process.argv[process.argv.indexOf("--project-path") + 1];',
        '  console.log(JSON.stringify({ success: true, sum: p.a + p.b, project }));',
        '});',
      ].join('\n'),
    );
    await expect(call('rye/sum', { a: 2, b: '3' })).resolves.toEqual({
      success: true,
      sum: 5,
      project,
    });
    expect((await dispatcher.chainOf('rye/sum', project)).map((l) => l.itemId)).toEqual([
      'rye/sum',
      'rye/core/runtimes/node_runtime',
      'rye/core/primitives/subprocess',
    ]);
  });

  it("runs RYE's newer script layout (rye/core/runtimes/python/script): parameters on stdin", async () => {
    put(
      'project',
      'rye/stdin_tool.py',
      [
        '__version__ = "1.0.0"',
        '__tool_type__ = "python"',
        '__executor_id__ = "rye/core/runtimes/python/script"',
        '__tool_description__ = "reads stdin"',
        'CONFIG_SCHEMA = {"type": "object", "properties": {"word": {"type": "string"}}}',
        'import json, sys',
        'if __name__ == "__main__":',
        '    params = json.loads(sys.stdin.read())',
        '    print(json.dumps({"success": True, "echo": params["word"], "argv": sys.argv[1:]}))',
      ].join('\n'),
    );
    await expect(call('rye/stdin_tool', { word: 'hi' })).resolves.toEqual({
      success: true,
      echo: 'hi',
      argv: ['--project-path', project],
    });
  });

  it('reports a malformed YAML tool with the line to fix', async () => {
    put(
      'project',
      'broken.yaml',
      'version: 1.0.0\ntool_type: yaml\ndescription: x\nexecutor_id: 12\n',
    );
    const err = await rejection(call('broken'));
    expect(err.code).toBe('INVALID_TOOL');
    expect(err.location).toMatchObject({ line: 4 });
    put('project', 'graphy.yaml', 'tool_type: graph\nconfig: {}\n');
    expect((await rejection(call('graphy'))).hint).toContain('item_type="directive"');
  });

  it('kills the whole process group when a subprocess tool times out', async () => {
    put(
      'project',
      'forks.yaml',
      yamlTool(
        'rye/core/runtimes/bash_runtime',
        `config:\n  command: 'sleep 30 & echo $! > "$2/child.pid"; wait'\n  timeout: 0.5\n`,
      ),
    );
    const err = await rejection(call('forks'));
    expect(err).toMatchObject({ code: 'STEP_TIMEOUT', retryable: true });
    const pid = Number(readFileSync(join(project, 'child.pid'), 'utf8'));
    expect(alive(pid), 'the forked child is gone').toBe(false);
  });
});

describe('the HTTP primitive', () => {
  const httpTool = (rest: string) =>
    yamlTool(
      'rye/core/primitives/http_client',
      `config_schema: { type: object, properties: { base: { type: string } } }\n${rest}`,
    );

  it('calls the endpoint with templated url, body and a bearer secret that never comes back', async () => {
    put(
      'project',
      'api/post.yaml',
      httpTool(
        `required_secrets: [API_TOKEN]\nconfig:\n  method: POST\n  url: '{base}/items?tag={tag}'\n  body: { name: '{tag}' }\n  auth: { type: bearer, token: '\${API_TOKEN}' }\n`,
      ),
    );
    const result = (await call('api/post', { base: url, tag: 'blue' })) as {
      status_code: number;
      body: Record<string, unknown>;
    };
    expect(result.status_code).toBe(200);
    expect(result.body).toMatchObject({
      method: 'POST',
      path: '/items',
      query: '?tag=blue',
      body: '{"name":"blue"}',
    });
    expect(result.body.auth).toBe('Bearer ***');
  });

  it('makes 5xx and 429 retryable, other 4xx fatal, and times out', async () => {
    put('project', 'api/status.yaml', httpTool(`config:\n  url: '{base}/status?code={code}'\n`));
    await expect(call('api/status', { base: url, code: 503 })).rejects.toMatchObject({
      code: 'HTTP_FAILED',
      retryable: true,
    });
    await expect(call('api/status', { base: url, code: 429 })).rejects.toMatchObject({
      retryable: true,
    });
    await expect(call('api/status', { base: url, code: 404 })).rejects.toMatchObject({
      code: 'HTTP_FAILED',
      retryable: false,
    });
    put('project', 'api/slow.yaml', httpTool(`config:\n  url: '{base}/slow'\n  timeout: 0.3\n`));
    await expect(call('api/slow', { base: url })).rejects.toMatchObject({
      code: 'STEP_TIMEOUT',
      retryable: true,
    });
    await expect(
      call('api/status', { base: 'http://127.0.0.1:1', code: 200 }),
    ).rejects.toMatchObject({ code: 'HTTP_FAILED', retryable: true });
  });
});

describe('secrets and output schemas', () => {
  const envDump = (rest: string) =>
    yamlTool(
      'rye/core/primitives/subprocess',
      `config:\n  command: \${RYE_NODE}\n  args: ['-e', 'console.log(JSON.stringify({token: process.env.API_TOKEN ?? null, other: process.env.OTHER_SECRET ?? null, leak: process.env.API_TOKEN}))']\n${rest}`,
    );

  it('hands a tool only the secrets it declares, and scrubs their values from its result', async () => {
    put('project', 'sec/declared.yaml', envDump('required_secrets: [API_TOKEN]\n'));
    put('project', 'sec/undeclared.yaml', envDump(''));
    await expect(call('sec/declared')).resolves.toEqual({ token: '***', other: null, leak: '***' });
    await expect(call('sec/undeclared')).resolves.toEqual({ token: null, other: null });
  });

  it('reads secrets from a file outside the project, and names the missing ones', async () => {
    put('project', 'sec/filed.yaml', envDump('required_secrets: [FILED_SECRET]\n'));
    const missing = await rejection(call('sec/filed'));
    expect(missing).toMatchObject({ code: 'MISSING_SECRET', retryable: false });
    expect(missing.message).toContain('FILED_SECRET');
    writeFileSync(join(base, 'secrets.env'), '# test\nFILED_SECRET="from-the-file"\n');
    await expect(call('sec/filed')).resolves.toMatchObject({ token: null });
  });

  it('refuses a secrets file inside the project', async () => {
    const inside = new ItemDispatcher(resolver, {
      env: {},
      secretsFile: join(project, 'secrets.env'),
    });
    writeFileSync(join(project, 'secrets.env'), 'API_TOKEN=x\n');
    put('project', 'sec/inside.yaml', envDump('required_secrets: [API_TOKEN]\n'));
    const err = await rejection(
      caller(
        () => inside,
        () => project,
      )('sec/inside'),
    );
    expect(err.message).toContain('inside the project');
    await inside.close();
  });

  it('checks results against output_schema', async () => {
    put(
      'project',
      'typed.yaml',
      yamlTool(
        'rye/core/primitives/subprocess',
        `config:\n  command: /bin/echo\n  args: ['{"count": "many"}']\noutput_schema:\n  type: object\n  properties: { count: { type: integer } }\n  required: [count]\n`,
      ),
    );
    const err = await rejection(call('typed'));
    expect(err).toMatchObject({ code: 'INVALID_OUTPUT', retryable: false });
    expect(err.message).toContain('/count must be integer');
  });
});
