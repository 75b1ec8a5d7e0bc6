/**
 * The MCP primitive: calls a tool on an MCP server through the official SDK, keeping one connected
 * client per server (streamable HTTP, legacy SSE, or a stdio child process) for the life of the
 * pool. A dropped connection is opened again on the next call. Callers must {@link
 * McpClientPool.close} the pool: stdio servers are child processes and keep Node alive until then.
 */
import { createHash } from 'node:crypto';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { didYouMean } from '../../errors/did-you-mean.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { resolveMcpServer, type ResolvedMcpServer } from '../../items/mcp-definition.js';
import { abortError } from '../../tools/abort-error.js';
import {
  closeConnection,
  listTools,
  openConnection,
  type McpConnection,
} from './mcp-connection.js';
import { callFailure, timeoutError, toolResultValue } from './mcp-result.js';
import type { McpToolCall } from './mcp-tool-call.js';

export type { McpToolCall } from './mcp-tool-call.js';

/** A connection of the pool, while it opens and once it is open. */
interface PoolEntry {
  opening: Promise<McpConnection>;
  conn?: McpConnection;
}

/** Calls MCP tools, keeping one connected client per server definition and environment. */
export class McpClientPool {
  private readonly connections = new Map<string, PoolEntry>();

  /**
   * Calls `call.toolName` and returns its result: `structuredContent` when the tool gives it, else
   * its content (one text item: the text, parsed when it is JSON; several items: the array).
   * Rejects with `TOOL_FAILED` (fatal) when the tool reports an error, `MCP_FAILED` when the
   * server cannot be reached (retryable) or has no such tool (fatal), `STEP_TIMEOUT` (retryable)
   * after `timeoutMs`, and the abort reason (see {@link abortError}) when `signal` aborts. The
   * call's `traceparent` goes in the request's `_meta` (see {@link McpToolCall.traceparent}).
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
          {
            name: call.toolName,
            arguments: call.params,
            ...(call.traceparent !== undefined && { _meta: { traceparent: call.traceparent } }),
          },
          undefined,
          { signal: call.signal, timeout: Math.max(1, deadline - Date.now()) },
        );
        return toolResultValue(result, call, server);
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

  private connection(server: ResolvedMcpServer, call: McpToolCall): Promise<McpConnection> {
    const key = connectionKey(server, call);
    const existing = this.connections.get(key);
    if (existing && !existing.conn?.closed) return existing.opening;
    const forget = () => {
      if (this.connections.get(key) === entry) this.connections.delete(key);
    };
    const entry: PoolEntry = {
      opening: openConnection(server, call).then(
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
  private drop(conn: McpConnection): void {
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

/** Fails fatally when the server has no such tool (after listing again, in case it changed). */
async function checkTool(
  conn: McpConnection,
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
