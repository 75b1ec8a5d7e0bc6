import { randomUUID } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirigentError } from '../../../src/errors/index.js';
import { parseMcpServer, type McpServerDefinition } from '../../../src/items/mcp-definition.js';
import { McpClientPool, type McpToolCall } from '../../../src/runtimes/mcp/mcp-client-pool.js';
import { rejection } from '../tools/helpers.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/mcp/', import.meta.url));
const STDIO_SERVER = join(FIXTURES, 'stdio-server.mjs');
const ENV = { PATH: process.env.PATH ?? '', WHO: 'Ada', FIXTURE_SECRET: 's3' };

const projectDir = realpathSync(mkdtempSync(join(tmpdir(), 'dirigent-mcp-')));
let http: Server;
/** Sessions of the stateful streamable endpoint, by id. */
const sessions = new Map<string, StreamableHTTPServerTransport>();
let baseUrl: string;
const pool = new McpClientPool();

beforeAll(async () => {
  const fixture = (await import(pathToFileURL(join(FIXTURES, 'fixture-server.mjs')).href)) as {
    buildServer: () => McpServer;
  };
  http = serveHttp(fixture.buildServer);
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await pool.close();
  http.closeAllConnections();
  await new Promise((r) => http.close(r));
  rmSync(projectDir, { recursive: true, force: true });
});

/**
 * The fixture server over HTTP: stateless streamable HTTP on /mcp (a server per request), legacy
 * stateful streamable HTTP on /stateful (sessions in `sessions`), legacy SSE on /sse + /messages
 * (a POST to /sse gets 404, so clients fall back), and 401 on /private.
 */
function serveHttp(buildServer: () => McpServer): Server {
  const sse = new Map<string, SSEServerTransport>();
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/mcp' && req.method === 'POST') {
      const server = buildServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void server.close());
      void server.connect(transport).then(() => transport.handleRequest(req, res));
    } else if (url.pathname === '/stateful') {
      const id = req.headers['mcp-session-id'];
      const known = typeof id === 'string' ? sessions.get(id) : undefined;
      if (known) return void known.handleRequest(req, res);
      if (id !== undefined || req.method !== 'POST') return void res.writeHead(404).end();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, transport),
        onsessionclosed: (sid) => void sessions.delete(sid),
      });
      void buildServer()
        .connect(transport)
        .then(() => transport.handleRequest(req, res));
    } else if (url.pathname === '/sse' && req.method === 'GET') {
      const transport = new SSEServerTransport('/messages', res);
      sse.set(transport.sessionId, transport);
      res.on('close', () => sse.delete(transport.sessionId));
      void buildServer().connect(transport);
    } else if (url.pathname === '/messages' && req.method === 'POST') {
      const transport = sse.get(url.searchParams.get('sessionId') ?? '');
      if (transport) void transport.handlePostMessage(req, res);
      else res.writeHead(404).end();
    } else if (url.pathname === '/private') {
      res.writeHead(401).end('missing token');
    } else {
      res.writeHead(url.pathname === '/mcp' ? 405 : 404).end();
    }
  });
}

function stdioServer(config: Record<string, unknown> = {}): McpServerDefinition {
  return parseMcpServer(
    {
      tool_type: 'mcp_server',
      config: {
        transport: 'stdio',
        command: 'node',
        args: [STDIO_SERVER],
        env: { GREETING: 'hello ${WHO:-nobody}' },
        ...config,
      },
    },
    join(projectDir, 'fixture.yaml'),
  );
}

function httpServer(path: string): McpServerDefinition {
  return parseMcpServer(
    {
      tool_type: 'mcp_server',
      config: { transport: 'http', url: `${baseUrl}${path}`, timeout: 5 },
    },
    join(projectDir, `http${path.replace('/', '-')}.yaml`),
  );
}

function call(
  server: McpServerDefinition,
  toolName: string,
  params: Record<string, unknown> = {},
  extra: Partial<McpToolCall> = {},
): McpToolCall {
  return {
    server,
    toolName,
    params,
    env: ENV,
    projectDir,
    signal: new AbortController().signal,
    timeoutMs: 10_000,
    ...extra,
  };
}

describe('McpClientPool over stdio', () => {
  const server = stdioServer();

  it('calls a tool with params and maps its results', async () => {
    expect(await pool.call(call(server, 'echo', { text: 'hi there' }))).toBe('hi there');
    expect(await pool.call(call(server, 'add', { a: 2, b: 40 }))).toEqual({ sum: 42 });
    expect(await pool.call(call(server, 'stats', { values: [3, 9, 4] }))).toEqual({
      count: 3,
      max: 9,
    });
    expect(await pool.call(call(server, 'multi'))).toEqual([
      { type: 'text', text: 'first' },
      { type: 'text', text: 'second' },
    ]);
  });

  it('starts the server in the project with the call env and its expanded env, once', async () => {
    const first = (await pool.call(call(server, 'whoami'))) as Record<string, unknown>;
    expect(first).toMatchObject({ cwd: projectDir, greeting: 'hello Ada', secret: 's3' });
    const again = (await pool.call(call(server, 'whoami'))) as Record<string, unknown>;
    expect(again.pid).toBe(first.pid);
    const otherEnv = (await pool.call(
      call(server, 'whoami', {}, { env: { PATH: ENV.PATH } }),
    )) as Record<string, unknown>;
    expect(otherEnv).toMatchObject({ greeting: 'hello nobody', secret: null });
    expect(otherEnv.pid).not.toBe(first.pid);
  });

  it('maps isError to a fatal TOOL_FAILED with the text as message', async () => {
    const err = await rejection(pool.call(call(server, 'fail', { reason: 'no disk' })));
    expect(err.code).toBe('TOOL_FAILED');
    expect(err.retryable).toBe(false);
    expect(err.message).toBe('cannot do it: no disk');
  });

  it("fails fatally on an unknown tool, listing the server's tools", async () => {
    const err = await rejection(pool.call(call(server, 'ecko', { text: 'x' })));
    expect(err.code).toBe('MCP_FAILED');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('MCP server "fixture" (node ');
    expect(err.message).toContain('has no tool "ecko". Did you mean "echo"?');
    expect(err.message).toContain('Its tools: add, crash, echo, fail, multi, slow, stats, whoami.');
  });

  it('times out a slow tool with a retryable STEP_TIMEOUT, and the connection stays usable', async () => {
    const started = Date.now();
    const err = await rejection(pool.call(call(server, 'slow', { ms: 5000 }, { timeoutMs: 300 })));
    expect(err.code).toBe('STEP_TIMEOUT');
    expect(err.retryable).toBe(true);
    expect(err.message).toBe('MCP tool "slow" on server "fixture" timed out after 0.3 s.');
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await pool.call(call(server, 'echo', { text: 'still here' }))).toBe('still here');
  });

  it('rejects with the abort reason when the signal aborts', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const cancelled = await rejection(
      pool.call(call(server, 'slow', { ms: 5000 }, { signal: ac.signal })),
    );
    expect(cancelled.code).toBe('CANCELLED');
    expect(cancelled.retryable).toBe(false);

    const reason = DirigentError.retryable('STEP_TIMEOUT', 'the step timed out');
    const err = await rejection(
      pool.call(call(server, 'echo', { text: 'x' }, { signal: AbortSignal.abort(reason) })),
    );
    expect(err).toBe(reason);
  });

  it('reconnects after the server dropped the connection', async () => {
    const own = new McpClientPool();
    try {
      const before = (await own.call(call(server, 'whoami'))) as { pid: number };
      const err = await rejection(own.call(call(server, 'crash')));
      expect(err.code).toBe('MCP_FAILED');
      expect(err.retryable).toBe(true);
      const after = (await own.call(call(server, 'whoami'))) as { pid: number };
      expect(after.pid).not.toBe(before.pid);
    } finally {
      await own.close();
    }
  });

  it('kills the server process on close', async () => {
    const own = new McpClientPool();
    const { pid } = (await own.call(call(server, 'whoami'))) as { pid: number };
    expect(() => process.kill(pid, 0)).not.toThrow();
    await own.close();
    expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
  });

  it('fails fatally when the command does not exist', async () => {
    const missing = stdioServer({ command: 'dirigent-no-such-mcp-server' });
    const err = await rejection(pool.call(call(missing, 'echo', { text: 'x' })));
    expect(err.code).toBe('MCP_FAILED');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain(
      'Cannot reach MCP server "fixture" at dirigent-no-such-mcp-server',
    );
  });

  it('reports a server that exits at start-up with its stderr, retryably', async () => {
    const dying = stdioServer({ args: ['-e', 'console.error("bad config"); process.exit(2)'] });
    const err = await rejection(pool.call(call(dying, 'echo', { text: 'x' })));
    expect(err.code).toBe('MCP_FAILED');
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('bad config');
  });
});

describe('McpClientPool over HTTP', () => {
  it('calls a tool with params over streamable HTTP', async () => {
    const server = httpServer('/mcp');
    expect(await pool.call(call(server, 'echo', { text: 'over http' }))).toBe('over http');
    expect(await pool.call(call(server, 'add', { a: 1, b: 2 }))).toEqual({ sum: 3 });
    const err = await rejection(pool.call(call(server, 'fail', { reason: 'http' })));
    expect(err.code).toBe('TOOL_FAILED');
    expect(err.message).toBe('cannot do it: http');
  });

  it('keeps an HTTP session, opens a new one when the server forgot it, and ends it on close', async () => {
    const own = new McpClientPool();
    const server = httpServer('/stateful');
    expect(await own.call(call(server, 'echo', { text: 'one' }))).toBe('one');
    expect(sessions.size).toBe(1);
    const [first] = sessions.keys();
    sessions.clear(); // as after a restart of the server
    expect(await own.call(call(server, 'echo', { text: 'two' }))).toBe('two');
    expect(sessions.size).toBe(1);
    expect(sessions.has(first!)).toBe(false);
    await own.close();
    expect(sessions.size).toBe(0);
  });

  it('falls back to SSE when the streamable handshake gets a 4xx', async () => {
    const server = httpServer('/sse');
    expect(await pool.call(call(server, 'echo', { text: 'over sse' }))).toBe('over sse');
  });

  it('times out and aborts over HTTP', async () => {
    const server = httpServer('/mcp');
    const timeout = await rejection(
      pool.call(call(server, 'slow', { ms: 3000 }, { timeoutMs: 200 })),
    );
    expect(timeout.code).toBe('STEP_TIMEOUT');
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const cancelled = await rejection(
      pool.call(call(server, 'slow', { ms: 3000 }, { signal: ac.signal })),
    );
    expect(cancelled.code).toBe('CANCELLED');
  });

  it('fails fatally on an unknown tool', async () => {
    const err = await rejection(pool.call(call(httpServer('/mcp'), 'mult')));
    expect(err.code).toBe('MCP_FAILED');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('Did you mean "multi"?');
  });

  it('reports a refused connection as a retryable MCP_FAILED naming server and url', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const server = parseMcpServer(
      { tool_type: 'mcp_server', config: { url: `http://127.0.0.1:${port}/mcp` } },
      join(projectDir, 'gone.yaml'),
    );
    const err = await rejection(pool.call(call(server, 'echo', { text: 'x' })));
    expect(err.code).toBe('MCP_FAILED');
    expect(err.retryable).toBe(true);
    expect(err.message).toContain(`Cannot reach MCP server "gone" at http://127.0.0.1:${port}/mcp`);
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('fails fatally when the server refuses the credentials', async () => {
    const err = await rejection(pool.call(call(httpServer('/private'), 'echo', { text: 'x' })));
    expect(err.code).toBe('MCP_FAILED');
    expect(err.retryable).toBe(false);
    expect(err.hint).toContain('config.headers');
  });
});
