/**
 * RYE's MCP YAML files (reference §3.4), read without connecting to anything: server files
 * (`.ai/tools/mcp/servers/<name>.yaml`, `tool_type: mcp_server`) say how to reach a server; tool
 * files (`.ai/tools/mcp/<server>/<tool>.yaml`, `tool_type: mcp`) name one tool on one server.
 * `${VAR}` and `${VAR:-default}` in a server's connection settings stay as written here and are
 * expanded by {@link resolveMcpServer} at call time, from the environment of the call.
 *
 * This module gathers them: servers are read in `mcp-server-definition.ts`, tools in
 * `mcp-tool-definition.ts`, and `${VAR}` is expanded in `resolve-mcp-server.ts`.
 */
export {
  parseMcpServer,
  readMcpServer,
  type McpHttpServerDefinition,
  type McpServerDefinition,
  type McpStdioServerDefinition,
} from './mcp-server-definition.js';
export {
  MCP_RUNTIMES,
  parseMcpTool,
  readMcpTool,
  type McpToolDefinition,
} from './mcp-tool-definition.js';
export { resolveMcpServer, type ResolvedMcpServer } from './resolve-mcp-server.js';
