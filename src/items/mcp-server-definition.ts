/**
 * RYE's MCP server files (`.ai/tools/mcp/servers/<name>.yaml`, `tool_type: mcp_server`): how to
 * reach a server. `${VAR}` and `${VAR:-default}` in the connection settings stay as written here;
 * `resolveMcpServer` expands them at call time.
 */
import { basename, extname } from 'node:path';
import { contentHash } from '../directive/parse-directive.js';
import { McpFileProblems, readMcpYaml, show } from './mcp-yaml-file.js';

/** What every MCP server file declares, whatever its transport. */
interface McpServerBase {
  /** The server's name: the file name without extension (`context7`). */
  name: string;
  /** The server file, as given to the reader. */
  file: string;
  /** SHA-256 of the file's text: with `file`, it identifies one version of the server. */
  contentHash: string;
  version: string | undefined;
  description: string | undefined;
  /** `config.timeout` in milliseconds (default 30 s): the limit for connecting and listing tools. */
  timeoutMs: number;
}

/** A server reached over HTTP: streamable HTTP, or legacy SSE when the server only speaks that. */
export interface McpHttpServerDefinition extends McpServerBase {
  transport: 'http';
  /** `config.url`, unexpanded (`${VAR}` allowed). */
  url: string;
  /** `config.headers`, unexpanded. */
  headers: Record<string, string>;
}

/** A server started as a child process that speaks MCP on its stdin and stdout. */
export interface McpStdioServerDefinition extends McpServerBase {
  transport: 'stdio';
  /** `config.command`, unexpanded. */
  command: string;
  /** `config.args`, unexpanded. */
  args: string[];
  /** `config.env`: variables added to the environment of the call, unexpanded. */
  env: Record<string, string>;
  /** `config.cwd`, unexpanded, relative to the project; `undefined`: the project directory. */
  cwd: string | undefined;
}

/** An MCP server file (`tool_type: mcp_server`). */
export type McpServerDefinition = McpHttpServerDefinition | McpStdioServerDefinition;

/** RYE's connect.py default for `config.timeout`, in seconds. */
const DEFAULT_TIMEOUT_S = 30;

/** Reads and checks an MCP server file; throws `INVALID_TOOL` naming each wrong key. */
export async function readMcpServer(file: string): Promise<McpServerDefinition> {
  const { doc, text } = await readMcpYaml(file);
  return parseMcpServer(doc, file, text);
}

/**
 * Checks the parsed YAML of an MCP server file. With the file's `text`, errors point at the line
 * of the wrong key and the definition's `contentHash` is the text's; without it, at line 1.
 */
export function parseMcpServer(doc: unknown, file: string, text?: string): McpServerDefinition {
  const p = new McpFileProblems(file, text, 'MCP server');
  const root = p.root(doc, 'mcp_server');
  const config = p.map(root, 'config', 'Add a config mapping with transport and url or command.');
  let transport = config.transport;
  transport ??= 'url' in config ? 'http' : 'command' in config ? 'stdio' : undefined;
  if (transport !== 'http' && transport !== 'stdio') {
    p.add('config.transport', transport === undefined ? 'is missing' : `is ${show(transport)}`);
  }
  const timeout = config.timeout ?? DEFAULT_TIMEOUT_S;
  if (typeof timeout !== 'number' || !(timeout > 0)) p.add('config.timeout', `is ${show(timeout)}`);
  const base: McpServerBase = {
    name: basename(file, extname(file)),
    file,
    contentHash: contentHash(text ?? JSON.stringify(doc)),
    version: p.optionalString(root, 'version'),
    description: p.optionalString(root, 'description'),
    timeoutMs: (typeof timeout === 'number' ? timeout : DEFAULT_TIMEOUT_S) * 1000,
  };
  let server: McpServerDefinition | undefined;
  if (transport === 'http') {
    const url = p.requiredString(config, 'config.url') ?? '';
    if (url && !url.includes('${') && !URL.canParse(url)) {
      p.add('config.url', `is not a URL: ${show(url)}`);
    }
    server = { ...base, transport, url, headers: p.stringMap(config, 'config.headers') };
  } else if (transport === 'stdio') {
    const command = p.requiredString(config, 'config.command') ?? '';
    const args = p.stringList(config, 'config.args');
    const env = p.stringMap(config, 'config.env');
    const cwd = p.optionalString(config, 'config.cwd');
    server = { ...base, transport, command, args, env, cwd };
  }
  p.throwIfAny();
  return server!;
}
