import type { McpServerDefinition } from '../../items/mcp-definition.js';

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
  /**
   * The W3C `traceparent` of the span running the call, sent as `params._meta.traceparent` of the
   * `tools/call` request (MCP's convention, SEP-414): per request, whatever the transport, as the
   * connection and a stdio server's environment serve many calls.
   */
  traceparent?: string;
  signal: AbortSignal;
  /** Limit for the whole call, connecting included. */
  timeoutMs: number;
}
