/**
 * What a `tools/call` comes to: the value of a tool's result, or a `DirigentError` saying whether
 * the step may be retried.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode as RpcCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import type { ResolvedMcpServer } from '../../items/mcp-definition.js';
import { connectFailure, type McpConnection } from './mcp-connection.js';
import type { McpToolCall } from './mcp-tool-call.js';
import { callTimedOut } from '../../errors/stop-errors.js';

/** An item of a tool result's content (`text`, `image`, `resource`, …). */
type ContentItem = { type: string; text?: unknown };

/** The value of a tool's result, or its error as a fatal `TOOL_FAILED`. */
export function toolResultValue(
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
export function callFailure(
  e: unknown,
  call: McpToolCall,
  server: ResolvedMcpServer,
  conn: McpConnection,
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

/** The retryable `STEP_TIMEOUT` of a call that outlasted its `timeoutMs`. */
export function timeoutError(call: McpToolCall, label: string): DirigentError {
  return callTimedOut(label, call.timeoutMs);
}
