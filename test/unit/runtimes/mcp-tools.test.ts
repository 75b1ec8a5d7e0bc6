/**
 * RYE's MCP tool files run unmodified through their chain (tool → mcp_*_runtime →
 * dirigent/primitives/mcp): the tool names its server's definition by item id, the server is
 * started (stdio) or reached (HTTP) once and kept, and declared secrets reach it and never return.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ItemResolver } from '../../../src/items/item-resolver.js';
import { SYSTEM_SPACE_ROOT } from '../../../src/items/space.js';
import { ItemDispatcher } from '../../../src/tools/item-dispatcher.js';
import { caller, rejection } from '../tools/helpers.js';

const SERVER = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'fixtures',
  'mcp',
  'stdio-server.mjs',
);
let project: string;
let resolver: ItemResolver;
let dispatcher: ItemDispatcher;

function put(path: string, text: string): void {
  const file = join(project, '.ai', 'tools', path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

const mcpTool = (tool: string, rest = '') => `# rye:validated:2026-02-05T00:00:00Z:placeholder
tool_type: mcp
executor_id: rye/core/runtimes/mcp_stdio_runtime
category: mcp/fixture
version: '1.0.0'
description: 'fixture ${tool}'
config:
  server: mcp/servers/fixture
  tool_name: ${tool}
${rest}`;

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-mcp-'));
  resolver = new ItemResolver([
    { name: 'project', root: join(project, '.ai') },
    { name: 'system', root: SYSTEM_SPACE_ROOT },
  ]);
  dispatcher = new ItemDispatcher(resolver, { env: { FIXTURE_SECRET: 'fixture-secret-value' } });
  put(
    'mcp/servers/fixture.yaml',
    `tool_type: mcp_server\nexecutor_id: null\ncategory: mcp/servers\nconfig:\n  transport: stdio\n  command: '\${RYE_NODE}'\n  args: ['${SERVER}']\n  timeout: 20\n`,
  );
  put(
    'mcp/fixture/add.yaml',
    mcpTool(
      'add',
      'input_schema:\n  type: object\n  properties: { a: { type: number }, b: { type: number } }\n  required: [a, b]\n',
    ),
  );
  put('mcp/fixture/whoami.yaml', mcpTool('whoami', 'required_secrets: [FIXTURE_SECRET]\n'));
  put('mcp/fixture/fail.yaml', mcpTool('fail'));
  put('mcp/fixture/nothing.yaml', mcpTool('no_such_tool'));
});

afterAll(async () => {
  await dispatcher.close();
  resolver.close();
  rmSync(project, { recursive: true, force: true });
});

const call = caller(
  () => dispatcher,
  () => project,
);

describe('MCP tools', () => {
  it('calls the tool on its server, with parameters validated by the input_schema', async () => {
    await expect(call('mcp/fixture/add', { a: 2, b: '3' })).resolves.toEqual({ sum: 5 });
    expect((await dispatcher.chainOf('mcp/fixture/add', project)).map((l) => l.itemId)).toEqual([
      'mcp/fixture/add',
      'rye/core/runtimes/mcp_stdio_runtime',
      'dirigent/primitives/mcp',
    ]);
    expect((await rejection(call('mcp/fixture/add', { a: 2 }))).code).toBe('INVALID_PARAMS');
  });

  it('hands declared secrets to the server and scrubs them from the result', async () => {
    const who = (await call('mcp/fixture/whoami')) as { secret: string; cwd: string };
    expect(who.secret).toBe('***');
    expect(who.cwd).toBe(project);
  });

  it('turns isError into a fatal TOOL_FAILED and an unknown tool name into MCP_FAILED', async () => {
    await expect(call('mcp/fixture/fail', { reason: 'no' })).rejects.toMatchObject({
      code: 'TOOL_FAILED',
      retryable: false,
      message: expect.stringContaining('cannot do it: no'),
    });
    const unknown = await rejection(call('mcp/fixture/nothing'));
    expect(unknown.code).toBe('MCP_FAILED');
    expect(unknown.message).toContain('add');
  });
});
