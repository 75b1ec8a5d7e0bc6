/**
 * The MCP primitive: calls a tool on an MCP server through the official SDK, keeping one connected
 * client per server (streamable HTTP, legacy SSE, or a stdio child process) for the life of the
 * pool. A dropped connection is opened again on the next call. Callers must {@link
 * McpClientPool.close} the pool: stdio servers are child processes and keep Node alive until then.
 */
import { createHash } from 'node:crypto';
import { resolve as resolvePath } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SseError, SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode as RpcCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { didYouMean } from '../../errors/did-you-mean.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import {
  resolveMcpServer,
  type McpServerDefinition,
  type ResolvedMcpServer,
} from '../../items/mcp-definition.js';
import { abortError } from '../../tools/abort-error.js';

/** One call of a tool on an MCP server. */
export interface McpToolCall {
  server: McpServerDefinition;
  /** The tool's name on the server (`config.tool_name` of the tool file). */
  toolName: string;
  params: Record<string, unknown>;
  /** Expands `${VAR}` in the server's settings; also the whole environment of a stdio server. */
  env: Record<string, string>;
  /** The working directory of a stdio server (its `config.cwd` is relative to it). */
  projectDir: string;
  signal: AbortSignal;
  /** Limit for the whole call, connecting included. */
  timeoutMs: number;
}

/** A connected client and what the pool knows about its server. */
interface Connection {
  client: Client;
  /** The names of the server's tools; `undefined` when the server cannot list them. */
  tools: Set<string> | undefined;
  closed: boolean;
  /** The server's url or command line, for messages. */
  where: string;
  /** The end of a stdio server's stderr, for messages when it fails. */
  stderr: () => string;
}

/** A connection of the pool, while it opens and once it is open. */
interface PoolEntry {
  opening: Promise<Connection>;
  conn?: Connection;
}

/** An item of a tool result's content (`text`, `image`, `resource`, …). */
type ContentItem = { type: string; text?: unknown };

const CLIENT_INFO = { name: 'dirigent', version: '0.1.0' };
const STDERR_TAIL_CHARS = 2000;
/** How long `close()` waits for an HTTP server to end its session. */
const TERMINATE_MS = 1000;

/** Calls MCP tools, keeping one connected client per server definition and environment. */
export class McpClientPool {
  private readonly connections = new Map<string, PoolEntry>();

  /**
   * Calls `call.toolName` and returns its result: `structuredContent` when the tool gives it, else
   * its content (one text item: the text, parsed when it is JSON; several items: the array).
   * Rejects with `TOOL_FAILED` (fatal) when the tool reports an error, `MCP_FAILED` when the
   * server cannot be reached (retryable) or has no such tool (fatal), `STEP_TIMEOUT` (retryable)
   * after `timeoutMs`, and the abort reason (see {@link abortError}) when `signal` aborts.
   */
  async call(call: McpToolCall): Promise<unknown> {
    const label = `MCP tool "${call.toolName}" on server "${call.server.name}"`;
    if (call.signal.aborted) throw abortError(call.signal, label);
    const server = resolveMcpServer(call.server, call.env);
    const deadline = Date.now() + call.timeoutMs;
    const bounded = <T>(work: Promise<T>) => race(work, call, label, deadline);
    for (let attempt = 0; ; attempt++) {
      const conn = await bounded(this.connection(server, call));
      try {
        await bounded(checkTool(conn, call, server, deadline));
        const result = await conn.client.callTool(
          { name: call.toolName, arguments: call.params },
          undefined,
          { signal: call.signal, timeout: Math.max(1, deadline - Date.now()) },
        );
        return toValue(result, call, server);
      } catch (e) {
        if (e instanceof DirigentError) throw e;
        if (call.signal.aborted) throw abortError(call.signal, label);
        // The server forgot the session (it restarted): the request was refused, not run.
        if (attempt === 0 && e instanceof StreamableHTTPError && e.code === 404) {
          this.drop(conn);
          continue;
        }
        const failure = callFailure(e, call, server, conn, label);
        if (failure.retryable && failure.code === ErrorCode.MCP_FAILED) this.drop(conn);
        throw failure;
      }
    }
  }

  /** Closes every client: stdio servers are stopped (their processes killed if they linger). */
  async close(): Promise<void> {
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(all.map((e) => e.opening.then(closeConnection, () => undefined)));
  }

  private connection(server: ResolvedMcpServer, call: McpToolCall): Promise<Connection> {
    const key = connectionKey(server, call);
    const existing = this.connections.get(key);
    if (existing && !existing.conn?.closed) return existing.opening;
    const forget = () => {
      if (this.connections.get(key) === entry) this.connections.delete(key);
    };
    const entry: PoolEntry = {
      opening: open(server, call).then(
        (conn) => {
          entry.conn = conn;
          conn.client.onclose = () => {
            conn.closed = true;
            forget();
          };
          return conn;
        },
        (e: unknown) => {
          forget();
          throw e;
        },
      ),
    };
    this.connections.set(key, entry);
    return entry.opening;
  }

  /** Forgets `conn` at once (the next call opens a new one) and closes it in the background. */
  private drop(conn: Connection): void {
    for (const [key, entry] of this.connections) {
      if (entry.conn === conn) this.connections.delete(key);
    }
    void closeConnection(conn);
  }
}

/** One client per server version, resolved settings and (for stdio) environment and directory. */
function connectionKey(server: ResolvedMcpServer, call: McpToolCall): string {
  const parts: unknown[] = [server.file, server.contentHash];
  if (server.transport === 'http') parts.push(server.url, server.headers);
  else parts.push(server.command, server.args, server.env, server.cwd, call.env, call.projectDir);
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

async function open(server: ResolvedMcpServer, call: McpToolCall): Promise<Connection> {
  if (server.transport === 'stdio') {
    const cwd = resolvePath(call.projectDir, server.cwd ?? '.');
    const transport = new StdioClientTransport({
      command: server.command,
      args: server.args,
      env: { ...call.env, ...server.env },
      cwd,
      stderr: 'pipe',
    });
    let tail = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
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
  conn: Connection,
  transport: Transport,
  server: ResolvedMcpServer,
): Promise<Connection> {
  try {
    const connecting = conn.client.connect(transport, { timeout: server.timeoutMs });
    await withTimeout(connecting, server.timeoutMs, conn);
    return await listTools(conn, server);
  } catch (e) {
    await conn.client.close().catch(() => undefined);
    throw e;
  }
}

function newConnection(where: string, stderr: () => string): Connection {
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  const conn: Connection = { client, tools: undefined, closed: false, where, stderr };
  client.onclose = () => {
    conn.closed = true;
  };
  return conn;
}

/** Fills `conn.tools`; a server without the tools capability (or `tools/list`) is not checked. */
async function listTools(
  conn: Connection,
  server: ResolvedMcpServer,
  options: { signal?: AbortSignal; timeout: number } = { timeout: server.timeoutMs },
): Promise<Connection> {
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

/** Fails fatally when the server has no such tool (after listing again, in case it changed). */
async function checkTool(
  conn: Connection,
  call: McpToolCall,
  server: ResolvedMcpServer,
  deadline: number,
): Promise<void> {
  if (conn.tools === undefined || conn.tools.has(call.toolName)) return;
  await listTools(conn, server, {
    signal: call.signal,
    timeout: Math.max(1, deadline - Date.now()),
  });
  const tools = [...(conn.tools ?? [])].sort();
  if (conn.tools === undefined || conn.tools.has(call.toolName)) return;
  throw DirigentError.fatal(
    ErrorCode.MCP_FAILED,
    `MCP server "${server.name}" (${conn.where}) has no tool "${call.toolName}".` +
      `${didYouMean(call.toolName, tools)} Its tools: ${tools.join(', ') || '(none)'}.`,
    {
      hint: "Fix config.tool_name in the MCP tool's file, or rediscover the server's tools.",
      details: { server: server.name, tool: call.toolName, tools },
    },
  );
}

/** The value of a tool's result, or its error as a fatal `TOOL_FAILED`. */
function toValue(
  result: Awaited<ReturnType<Client['callTool']>>,
  call: McpToolCall,
  server: ResolvedMcpServer,
): unknown {
  const content = Array.isArray(result.content) ? (result.content as ContentItem[]) : [];
  if (result.isError === true) {
    const text = content
      .map((c) => (c.type === 'text' ? String(c.text) : ''))
      .filter((t) => t !== '')
      .join('\n')
      .trim();
    throw DirigentError.fatal(
      ErrorCode.TOOL_FAILED,
      text || `MCP tool "${call.toolName}" on server "${server.name}" failed without a message.`,
      { details: { server: server.name, tool: call.toolName, content } },
    );
  }
  if (result.structuredContent !== undefined) return result.structuredContent;
  if (content.length === 0) return 'toolResult' in result ? result.toolResult : null;
  if (content.length > 1) return content;
  const only = content[0]!;
  return only.type === 'text' ? parseIfJson(String(only.text)) : only;
}

function parseIfJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** What a failed `tools/call` (or `tools/list`) means for the step. */
function callFailure(
  e: unknown,
  call: McpToolCall,
  server: ResolvedMcpServer,
  conn: Connection,
  label: string,
): DirigentError {
  const details = { server: server.name, tool: call.toolName, where: conn.where };
  if (e instanceof McpError) {
    if (e.code === RpcCode.RequestTimeout) return timeoutError(call, label);
    if (e.code === RpcCode.ConnectionClosed) return connectFailure(e, server, conn, '');
    const fatal = [RpcCode.InvalidParams, RpcCode.InvalidRequest, RpcCode.MethodNotFound];
    return new DirigentError(ErrorCode.MCP_FAILED, `${label} was refused: ${e.message}`, {
      retryable: !fatal.includes(e.code),
      details: { ...details, rpc_code: e.code },
      cause: e,
    });
  }
  if (e instanceof Error && e.name === 'ZodError') {
    return DirigentError.fatal(ErrorCode.MCP_FAILED, `${label} returned an invalid result.`, {
      details,
      cause: e,
    });
  }
  return connectFailure(e, server, conn, '');
}

/** A failure to reach the server: retryable, except a missing program or refused credentials. */
function connectFailure(
  e: unknown,
  server: ResolvedMcpServer,
  conn: Connection,
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

function timeoutError(call: McpToolCall, label: string): DirigentError {
  return DirigentError.retryable(
    ErrorCode.STEP_TIMEOUT,
    `${label} timed out after ${call.timeoutMs / 1000} s.`,
  );
}

/** Settles with `work`, or rejects at the deadline or on abort (leaving `work` to others). */
function race<T>(work: Promise<T>, call: McpToolCall, label: string, deadline: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      call.signal.removeEventListener('abort', onAbort);
      settle();
    };
    const onAbort = () => finish(() => reject(abortError(call.signal, label)));
    const timer = setTimeout(
      () => finish(() => reject(timeoutError(call, label))),
      Math.max(0, deadline - Date.now()),
    );
    call.signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => finish(() => resolve(v)),
      (e: unknown) => finish(() => reject(e)),
    );
  });
}

/** Rejects when `work` takes longer than `ms`, closing the client that does it. */
function withTimeout<T>(work: Promise<T>, ms: number, conn: Connection): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      void conn.client.close().catch(() => undefined);
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

async function closeConnection(conn: Connection): Promise<void> {
  const transport = conn.client.transport;
  if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((r) => (timer = setTimeout(r, TERMINATE_MS)));
    await Promise.race([transport.terminateSession().catch(() => undefined), late]);
    clearTimeout(timer);
  }
  await conn.client.close().catch(() => undefined);
}
