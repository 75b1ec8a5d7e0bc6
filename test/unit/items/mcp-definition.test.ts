import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DirigentError } from '../../../src/errors/index.js';
import {
  parseMcpServer,
  parseMcpTool,
  readMcpServer,
  readMcpTool,
  resolveMcpServer,
} from '../../../src/items/mcp-definition.js';
import { rejection } from '../tools/helpers.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/mcp/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'dirigent-mcp-def-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function yamlFile(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

function thrown(fn: () => unknown): DirigentError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DirigentError);
    return e as DirigentError;
  }
  throw new Error('expected an error');
}

const SIGNED = '# rye:signed:2026-02-04T23:57:39Z:placeholder:unsigned:unsigned\n';

describe('readMcpServer', () => {
  it("reads RYE's HTTP server file, leaving ${VAR} unexpanded", async () => {
    const server = await readMcpServer(join(FIXTURES, 'servers/context7.yaml'));
    expect(server).toMatchObject({
      name: 'context7',
      transport: 'http',
      url: 'https://mcp.context7.com/mcp',
      headers: {
        Authorization: 'Bearer ${CONTEXT7_API_KEY}',
        'X-Custom': '${CUSTOM_HEADER:-default-value}',
      },
      timeoutMs: 30_000,
      version: '1.0.0',
      description: 'MCP server: context7',
    });
    expect(server.contentHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reads a stdio server file with args and env', async () => {
    const server = await readMcpServer(join(FIXTURES, 'servers/rye-os.yaml'));
    expect(server).toMatchObject({
      name: 'rye-os',
      transport: 'stdio',
      command: 'python',
      args: ['-m', 'rye.server'],
      env: { RYE_DEBUG: '${RYE_DEBUG:-false}' },
      cwd: undefined,
    });
  });

  it('infers the transport from url or command when it is not written, as RYE does', () => {
    const doc = { tool_type: 'mcp_server', config: { command: 'node', args: ['s.mjs', 1] } };
    expect(parseMcpServer(doc, 'x.yaml')).toMatchObject({
      transport: 'stdio',
      args: ['s.mjs', '1'],
      timeoutMs: 30_000,
    });
  });

  it('names the missing key, the file and its line, and how to fix it', async () => {
    const file = yamlFile(
      'no-url.yaml',
      `${SIGNED}tool_type: mcp_server\nconfig:\n  transport: http\n  timeout: 10\n`,
    );
    const err = await rejection(readMcpServer(file));
    expect(err.code).toBe('INVALID_TOOL');
    expect(err.retryable).toBe(false);
    expect(err.message).toBe(`MCP server file ${file}: config.url is missing.`);
    expect(err.location).toEqual({ file, line: 3, column: 1 });
    expect(err.hint).toContain('url: https://');
  });

  it('lists every wrong key in one error, each at its line', async () => {
    const file = yamlFile(
      'bad-stdio.yaml',
      [
        'tool_type: mcp_server',
        'config:',
        '  transport: stdio',
        '  command: 42',
        '  args: {a: 1}',
        '  env:',
        '    A: [1]',
        '  timeout: -1',
      ].join('\n'),
    );
    const err = await rejection(readMcpServer(file));
    expect(err.message).toContain('config.timeout is -1');
    expect(err.message).toContain('config.command must be a non-empty string, not 42');
    expect(err.message).toContain('config.args must be a list of strings, not a mapping');
    expect(err.message).toContain('config.env.A must be a string, not a list');
    expect(err.details?.problems).toHaveLength(4);
    expect(err.location?.line).toBe(8);
  });

  it('rejects an unknown transport and a url that is not one', () => {
    const sse = thrown(() =>
      parseMcpServer({ tool_type: 'mcp_server', config: { transport: 'sse', url: 'x' } }, 'a.yaml'),
    );
    expect(sse.message).toContain('config.transport is "sse"');
    expect(sse.hint).toContain('transport: http');
    const url = thrown(() =>
      parseMcpServer({ tool_type: 'mcp_server', config: { url: 'not a url' } }, 'b.yaml'),
    );
    expect(url.message).toContain('config.url is not a URL: "not a url"');
  });

  it('rejects a file of another kind, and invalid YAML with its line', async () => {
    const tool = await rejection(readMcpServer(join(FIXTURES, 'context7/query-docs.yaml')));
    expect(tool.message).toContain('tool_type must be mcp_server: tool_type is "mcp"');
    const file = yamlFile('broken.yaml', 'tool_type: mcp_server\nconfig: [\n');
    const broken = await rejection(readMcpServer(file));
    expect(broken.code).toBe('INVALID_TOOL');
    expect(broken.message).toContain('is not valid YAML');
    expect(broken.location?.file).toBe(file);
  });

  it('reports a missing file as FILE_NOT_FOUND', async () => {
    const err = await rejection(readMcpServer(join(dir, 'nope.yaml')));
    expect(err.code).toBe('FILE_NOT_FOUND');
  });
});

describe('readMcpTool', () => {
  it("reads RYE's tool file", async () => {
    const file = join(FIXTURES, 'context7/query-docs.yaml');
    expect(await readMcpTool(file)).toEqual({
      file,
      version: '1.0.0',
      description: 'Retrieves documentation from Context7 for any library.',
      category: 'mcp/context7',
      executorId: 'rye/core/runtimes/mcp_http_runtime',
      runtimeTransport: 'http',
      server: 'mcp/servers/context7',
      serverConfigPath: '{project_path}/.ai/tools/mcp/servers/context7.yaml',
      toolName: 'query-docs',
      inputSchema: {
        type: 'object',
        properties: {
          libraryId: { type: 'string', description: 'Context7-compatible library ID' },
          query: { type: 'string', description: 'The question or task' },
        },
        required: ['libraryId', 'query'],
      },
    });
  });

  it("accepts RYE B's runtime ids and defaults the input schema", () => {
    const tool = parseMcpTool(
      {
        tool_type: 'mcp',
        executor_id: 'rye/core/runtimes/mcp/stdio',
        config: { server: 'mcp/servers/x', tool_name: 't' },
      },
      't.yaml',
    );
    expect(tool).toMatchObject({ runtimeTransport: 'stdio', inputSchema: { type: 'object' } });
  });

  it('names missing config keys and suggests the runtime id for a typo', async () => {
    const file = yamlFile(
      'bad-tool.yaml',
      [
        SIGNED.trim(),
        'tool_type: mcp',
        'executor_id: rye/core/runtimes/mcp_htp_runtime',
        'config:',
        '  server: mcp/servers/x',
        'input_schema: [1]',
      ].join('\n'),
    );
    const err = await rejection(readMcpTool(file));
    expect(err.code).toBe('INVALID_TOOL');
    expect(err.message).toContain(`MCP tool file ${file}:`);
    expect(err.message).toContain('Did you mean "rye/core/runtimes/mcp_http_runtime"?');
    expect(err.message).toContain('config.tool_name is missing');
    expect(err.message).toContain('input_schema must be a mapping, not a list');
    expect(err.location).toEqual({ file, line: 3, column: 1 });
  });

  it('without the text, points at line 1 of the file', () => {
    const err = thrown(() => parseMcpTool({ tool_type: 'mcp' }, 'x.yaml'));
    expect(err.message).toContain('executor_id is missing');
    expect(err.message).toContain('config is missing');
    expect(err.location).toEqual({ file: 'x.yaml', line: 1, column: 1 });
  });
});

describe('resolveMcpServer', () => {
  it('expands ${VAR} and ${VAR:-default} from the given env only', async () => {
    const server = await readMcpServer(join(FIXTURES, 'servers/context7.yaml'));
    expect(resolveMcpServer(server, { CONTEXT7_API_KEY: 'k1' })).toMatchObject({
      url: 'https://mcp.context7.com/mcp',
      headers: { Authorization: 'Bearer k1', 'X-Custom': 'default-value' },
    });
    const stdio = await readMcpServer(join(FIXTURES, 'servers/rye-os.yaml'));
    expect(resolveMcpServer(stdio, { RYE_DEBUG: 'true' })).toMatchObject({
      env: { RYE_DEBUG: 'true' },
    });
  });

  it('fails with MISSING_SECRET naming a variable that is unset and has no default', async () => {
    const server = await readMcpServer(join(FIXTURES, 'servers/context7.yaml'));
    const err = thrown(() => resolveMcpServer(server, {}));
    expect(err.code).toBe('MISSING_SECRET');
    expect(err.message).toContain('CONTEXT7_API_KEY');
    expect(err.message).toContain('config.headers.Authorization');
  });
});
