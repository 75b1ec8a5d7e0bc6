/**
 * Connecting to an MCP server: streamable HTTP (falling back to legacy SSE when the server refuses
 * it) or a stdio child process in a group of its own (`McpStdioTransport`) whose stderr is kept
 * for messages; then the handshake, listing the
 * server's tools, and closing. Failures to reach a server become `MCP_FAILED` errors (see
 * {@link connectFailure}).
 */
import { resolve as resolvePath } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SseError, SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode as RpcCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import type { ResolvedMcpServer } from '../../items/mcp-definition.js';
import { McpStdioTransport } from './mcp-stdio-transport.js';
import type { McpToolCall } from './mcp-tool-call.js';

/** A connected client and what is known about its server. */
export interface McpConnection {
  client: Client;
  /** The names of the server's tools; `undefined` when the server cannot list them. */
  tools: Set<string> | undefined;
  closed: boolean;
  /** The server's url or command line, for messages. */
  where: string;
  /** The end of a stdio server's stderr, for messages when it fails. */
  stderr: () => string;
}

const CLIENT_INFO = { name: 'dirigent', version: '0.1.0' };
const STDERR_TAIL_CHARS = 2000;
/** How long {@link closeConnection} waits for an HTTP server to end its session. */
const TERMINATE_MS = 1000;

/**
 * Connects to `server` and lists its tools. A stdio server is started in `call.projectDir` (or its
 * `config.cwd`, relative to it) with `call.env` and its own `config.env`.
 */
export async function openConnection(
  server: ResolvedMcpServer,
  call: McpToolCall,
): Promise<McpConnection> {
  if (server.transport === 'stdio') {
    const cwd = resolvePath(call.projectDir, server.cwd ?? '.');
    const transport = new McpStdioTransport({
      command: server.command,
      args: server.args,
      env: { ...call.env, ...server.env },
      cwd,
    });
    let tail = '';
    transport.stderr.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    const conn = newConnection([server.command, ...server.args].join(' '), () => tail.trim());
    return handshake(conn, transport, server).catch((e: unknown) => {
      throw connectFailure(e, server, conn, ` (in ${cwd})`);
    });
  }
  if (!URL.canParse(server.url)) {
    throw DirigentError.fatal(
      ErrorCode.INVALID_TOOL,
      `MCP server "${server.name}" has an invalid url ${JSON.stringify(server.url)} (${server.file}).`,
      { hint: 'Give config.url as an absolute http(s) URL.' },
    );
  }
  const url = new URL(server.url);
  const requestInit = { headers: server.headers };
  const streamable = newConnection(server.url, () => '');
  let refused: unknown;
  try {
    return await handshake(
      streamable,
      new StreamableHTTPClientTransport(url, { requestInit }),
      server,
    );
  } catch (e) {
    const status = e instanceof StreamableHTTPError ? (e.code ?? 0) : 0;
    if (status < 400 || status >= 500 || status === 401 || status === 403) {
      throw connectFailure(e, server, streamable, '');
    }
    refused = e;
  }
  // The server refused the streamable handshake: it may be a legacy HTTP+SSE server.
  const sse = newConnection(server.url, () => '');
  return handshake(sse, new SSEClientTransport(url, { requestInit }), server).catch(
    (e: unknown) => {
      const first = refused instanceof Error ? refused.message : String(refused);
      throw connectFailure(e, server, sse, ` (streamable HTTP: ${first}; then SSE)`);
    },
  );
}

/**
 * Connects `conn` through `transport` and lists the server's tools, within the server's timeout
 * (an SSE stream that never sends its endpoint would otherwise hang); closes it on failure.
 */
async function handshake(
  conn: McpConnection,
  transport: Transport,
  server: ResolvedMcpServer,
): Promise<McpConnection> {
  try {
    const connecting = conn.client.connect(transport, { timeout: server.timeoutMs });
    await withTimeout(connecting, server.timeoutMs, conn);
    return await listTools(conn, server);
  } catch (e) {
    await conn.client.close().catch(closeFailed);
    throw e;
  }
}

function newConnection(where: string, stderr: () => string): McpConnection {
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  const conn: McpConnection = { client, tools: undefined, closed: false, where, stderr };
  client.onclose = () => {
    conn.closed = true;
  };
  return conn;
}

/** Fills `conn.tools`; a server without the tools capability (or `tools/list`) is not checked. */
export async function listTools(
  conn: McpConnection,
  server: ResolvedMcpServer,
  options: { signal?: AbortSignal; timeout: number } = { timeout: server.timeoutMs },
): Promise<McpConnection> {
  if (!conn.client.getServerCapabilities()?.tools) return conn;
  const names = new Set<string>();
  let cursor: string | undefined;
  try {
    do {
      const page = await conn.client.listTools(cursor === undefined ? {} : { cursor }, options);
      for (const t of page.tools) names.add(t.name);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  } catch (e) {
    if (e instanceof McpError && e.code === RpcCode.MethodNotFound) return conn;
    throw e;
  }
  conn.tools = names;
  return conn;
}

/** A failure to reach the server: retryable, except a missing program or refused credentials. */
export function connectFailure(
  e: unknown,
  server: ResolvedMcpServer,
  conn: McpConnection,
  extra: string,
): DirigentError {
  if (e instanceof DirigentError) return e;
  const err = e as Error & { code?: unknown; cause?: { message?: string; code?: unknown } };
  const reason = [err.message ?? String(e), err.cause?.message].filter(Boolean).join(': ');
  const stderr = conn.stderr();
  const message =
    `Cannot reach MCP server "${server.name}" at ${conn.where}${extra}: ${reason}` +
    (stderr ? `\n${stderr}` : '');
  const details = { server: server.name, where: conn.where, ...(stderr && { stderr }) };
  if (err.code === 'ENOENT' || err.code === 'EACCES') {
    return DirigentError.fatal(ErrorCode.MCP_FAILED, message, {
      hint: 'Check config.command (and config.cwd) of the server file and that the program is installed.',
      details,
      cause: e,
    });
  }
  const status = e instanceof StreamableHTTPError || e instanceof SseError ? e.code : undefined;
  if (status === 401 || status === 403) {
    return DirigentError.fatal(ErrorCode.MCP_FAILED, message, {
      hint: 'The server refused the credentials: check config.headers and the variables they use.',
      details,
      cause: e,
    });
  }
  return DirigentError.retryable(ErrorCode.MCP_FAILED, message, { details, cause: e });
}

/** Rejects when `work` takes longer than `ms`, closing the client that does it. */
function withTimeout<T>(work: Promise<T>, ms: number, conn: McpConnection): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      void conn.client.close().catch(closeFailed);
      reject(new Error(`no answer to the MCP handshake within ${ms / 1000} s`));
    }, ms);
    work.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** Closes `conn`'s client, first asking an HTTP server to end its session (for a short while). */
export async function closeConnection(conn: McpConnection): Promise<void> {
  const transport = conn.client.transport;
  if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((r) => (timer = setTimeout(r, TERMINATE_MS)));
    await Promise.race([
      transport.terminateSession().catch(() => {
        /* The server ends an idle session on its own; the client is closed below all the same. */
      }),
      late,
    ]);
    clearTimeout(timer);
  }
  await conn.client.close().catch(closeFailed);
}

/**
 * A client that did not close cleanly: it is dropped all the same, its process or connection
 * ended by the transport, and whatever failed before (the error being thrown) is what the caller
 * hears.
 */
function closeFailed(): void {
  // Nothing to keep: see above.
}
