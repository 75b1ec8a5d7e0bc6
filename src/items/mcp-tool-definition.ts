/**
 * RYE's MCP tool files (`.ai/tools/mcp/<server>/<tool>.yaml`, `tool_type: mcp`): one tool on one
 * server, named by the server file's item id.
 */
import { didYouMean } from '../errors/did-you-mean.js';
import { McpFileProblems, readMcpYaml, show } from './mcp-yaml-file.js';

/** An MCP tool file (`tool_type: mcp`). */
export interface McpToolDefinition {
  file: string;
  version: string | undefined;
  description: string | undefined;
  category: string | undefined;
  /** `executor_id`, one of {@link MCP_RUNTIMES}. */
  executorId: string;
  /** The transport the runtime is named after; the server file's own transport is what is used. */
  runtimeTransport: 'http' | 'stdio';
  /** `config.server`: the item id of the server file (`mcp/servers/context7`). */
  server: string;
  /** `config.server_config_path`, a template (`{project_path}/.ai/tools/mcp/servers/x.yaml`). */
  serverConfigPath: string | undefined;
  /** `config.tool_name`: the tool's name on the server. */
  toolName: string;
  /** `input_schema`: JSON Schema of the parameters; `{type: "object"}` when absent. */
  inputSchema: Record<string, unknown>;
}

/** The executor ids of MCP tools (RYE A and B spellings) and the transport each names. */
export const MCP_RUNTIMES: Readonly<Record<string, 'http' | 'stdio'>> = {
  'rye/core/runtimes/mcp_http_runtime': 'http',
  'rye/core/runtimes/mcp_stdio_runtime': 'stdio',
  'rye/core/runtimes/mcp/http': 'http',
  'rye/core/runtimes/mcp/stdio': 'stdio',
};

/** Reads and checks an MCP tool file; throws `INVALID_TOOL` naming each wrong key. */
export async function readMcpTool(file: string): Promise<McpToolDefinition> {
  const { doc, text } = await readMcpYaml(file);
  return parseMcpTool(doc, file, text);
}

/**
 * Checks the parsed YAML of an MCP tool file. With the file's `text`, errors point at the line of
 * the wrong key; without it, at line 1.
 */
export function parseMcpTool(doc: unknown, file: string, text?: string): McpToolDefinition {
  const p = new McpFileProblems(file, text, 'MCP tool');
  const root = p.root(doc, 'mcp');
  const executorId = root.executor_id;
  const runtimeTransport = typeof executorId === 'string' ? MCP_RUNTIMES[executorId] : undefined;
  if (runtimeTransport === undefined) {
    const known = Object.keys(MCP_RUNTIMES);
    const typo = typeof executorId === 'string' ? didYouMean(executorId, known) : '';
    p.add(
      'executor_id',
      executorId == null ? 'is missing' : `is ${show(executorId)}, not an MCP runtime.${typo}`,
      `Use ${known.slice(0, 2).join(' or ')}.`,
    );
  }
  const config = p.map(root, 'config', 'Add a config mapping with server and tool_name.');
  const server = p.requiredString(config, 'config.server');
  const toolName = p.requiredString(config, 'config.tool_name');
  const serverConfigPath = p.optionalString(config, 'config.server_config_path');
  const inputSchema = root.input_schema == null ? undefined : p.map(root, 'input_schema');
  p.throwIfAny();
  return {
    file,
    version: p.optionalString(root, 'version'),
    description: p.optionalString(root, 'description'),
    category: p.optionalString(root, 'category'),
    executorId: executorId as string,
    runtimeTransport: runtimeTransport!,
    server: server!,
    serverConfigPath,
    toolName: toolName!,
    inputSchema: inputSchema ?? { type: 'object' },
  };
}
