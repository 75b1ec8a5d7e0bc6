/**
 * RYE's MCP YAML files (reference §3.4), read without connecting to anything: server files
 * (`.ai/tools/mcp/servers/<name>.yaml`, `tool_type: mcp_server`) say how to reach a server; tool
 * files (`.ai/tools/mcp/<server>/<tool>.yaml`, `tool_type: mcp`) name one tool on one server.
 * `${VAR}` and `${VAR:-default}` in a server's connection settings stay as written here and are
 * expanded by {@link resolveMcpServer} at call time, from the environment of the call.
 */
import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { parseDocument, type Document } from 'yaml';
import { LineIndex } from '../directive/line-index.js';
import { contentHash } from '../directive/parse-directive.js';
import { locateYamlKey } from '../directive/yaml-location.js';
import { didYouMean } from '../errors/did-you-mean.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';

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

/** An MCP server with every `${VAR}` of its connection settings expanded (see {@link resolveMcpServer}). */
export type ResolvedMcpServer = McpServerDefinition;

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

/** RYE's connect.py default for `config.timeout`, in seconds. */
const DEFAULT_TIMEOUT_S = 30;

type Obj = Record<string, unknown>;

/** Reads and checks an MCP server file; throws `INVALID_TOOL` naming each wrong key. */
export async function readMcpServer(file: string): Promise<McpServerDefinition> {
  const text = await readText(file);
  return parseMcpServer(parseYaml(text, file), file, text);
}

/** Reads and checks an MCP tool file; throws `INVALID_TOOL` naming each wrong key. */
export async function readMcpTool(file: string): Promise<McpToolDefinition> {
  const text = await readText(file);
  return parseMcpTool(parseYaml(text, file), file, text);
}

/** How to fix each key, for the error that names it. */
const HINTS: Record<string, string> = {
  'config.transport':
    'Write "transport: http" (with url; SSE servers are found through it) or "transport: stdio" (with command).',
  'config.timeout': 'Give a positive number of seconds.',
  'config.url': 'Give the server\'s absolute URL, e.g. "url: https://mcp.example.com/mcp".',
  'config.command': 'Give the program to start, e.g. "command: npx".',
  'config.args': 'Write a list of strings, e.g. args: ["-y", "some-mcp-server"].',
  'config.server': 'Name the server file\'s item id, e.g. "server: mcp/servers/context7".',
  'config.tool_name': "Give the tool's name on the MCP server.",
  input_schema: "Give the tool's JSON Schema as a mapping, or remove the key.",
};

/**
 * Checks the parsed YAML of an MCP server file. With the file's `text`, errors point at the line
 * of the wrong key and the definition's `contentHash` is the text's; without it, at line 1.
 */
export function parseMcpServer(doc: unknown, file: string, text?: string): McpServerDefinition {
  const p = new Problems(file, text, 'MCP server');
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

/**
 * Checks the parsed YAML of an MCP tool file. With the file's `text`, errors point at the line of
 * the wrong key; without it, at line 1.
 */
export function parseMcpTool(doc: unknown, file: string, text?: string): McpToolDefinition {
  const p = new Problems(file, text, 'MCP tool');
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

/**
 * The server with `${VAR}` and `${VAR:-default}` expanded from `env` in its url, headers, command,
 * args, env and cwd (as RYE's connect.py does). A variable that is unset and has no default is a
 * fatal `MISSING_SECRET`: a silently empty token would only fail later, less clearly.
 */
export function resolveMcpServer(
  server: McpServerDefinition,
  env: Record<string, string>,
): ResolvedMcpServer {
  const x = (value: string, key: string) => expandVars(value, env, server, key);
  const xMap = (map: Record<string, string>, key: string) =>
    Object.fromEntries(Object.entries(map).map(([k, v]) => [k, x(v, `${key}.${k}`)]));
  if (server.transport === 'http') {
    return { ...server, url: x(server.url, 'url'), headers: xMap(server.headers, 'headers') };
  }
  return {
    ...server,
    command: x(server.command, 'command'),
    args: server.args.map((a, i) => x(a, `args[${i}]`)),
    env: xMap(server.env, 'env'),
    cwd: server.cwd === undefined ? undefined : x(server.cwd, 'cwd'),
  };
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

function expandVars(
  value: string,
  env: Record<string, string>,
  server: McpServerDefinition,
  key: string,
): string {
  return value.replace(VAR, (_m, name: string, fallback: string | undefined) => {
    const v = env[name];
    if (v !== undefined) return v;
    if (fallback !== undefined) return fallback;
    throw DirigentError.fatal(
      ErrorCode.MISSING_SECRET,
      `MCP server "${server.name}" needs the environment variable ${name} (in config.${key} of ${server.file}), which is not set.`,
      {
        location: { file: server.file, line: 1, column: 1 },
        hint: `Set ${name} (in the project's .env or the environment), or write \${${name}:-default}.`,
        details: { variable: name, server: server.name },
      },
    );
  });
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    throw DirigentError.fatal(
      ErrorCode.FILE_NOT_FOUND,
      `Cannot read MCP file ${file}: ${(e as Error).message}`,
      {
        cause: e,
      },
    );
  }
}

/** The YAML as plain data; the `# rye:signed:…` first line is a comment and needs no care. */
function parseYaml(text: string, file: string): unknown {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    throw DirigentError.fatal(
      ErrorCode.INVALID_TOOL,
      `${file} is not valid YAML: ${e.message.split('\n')[0]}`,
      {
        location: new LineIndex(file, text).at(e.pos[0]),
        hint: 'Fix the YAML syntax at that line.',
      },
    );
  }
  return doc.toJS() as unknown;
}

/** Collects what is wrong with one file, so a single error lists every wrong key. */
class Problems {
  private readonly list: {
    key: string;
    message: string;
    hint: string;
    location: SourceLocation;
  }[] = [];
  private readonly doc: Document | undefined;
  private readonly lines: LineIndex | undefined;

  constructor(
    private readonly file: string,
    text: string | undefined,
    private readonly what: string,
  ) {
    if (text !== undefined) {
      this.doc = parseDocument(text);
      this.lines = new LineIndex(file, text);
    }
  }

  /** Records that the key at dotted path `key` `problem`s (`config.url` + `is missing`). */
  add(key: string, problem: string, hint = HINTS[key] ?? 'Write a plain string.'): void {
    const location =
      this.doc && this.lines
        ? locateYamlKey(this.doc, key.split('.'), this.lines)
        : { file: this.file, line: 1, column: 1 };
    this.list.push({ key, message: `${key} ${problem}`, hint, location });
  }

  /** The top mapping, which must say `tool_type: <type>`; anything else fails at once. */
  root(doc: unknown, type: string): Obj {
    if (!isObj(doc) || doc.tool_type !== type) {
      const found = isObj(doc) ? `tool_type is ${show(doc.tool_type ?? null)}` : 'not a mapping';
      const hint = `${this.file} is read as an ${this.what} file; write "tool_type: ${type}".`;
      this.add('tool_type', `must be ${type}: ${found}`, hint);
      this.throwIfAny();
    }
    return doc as Obj;
  }

  /** A mapping; when it is missing or wrong, the problem is recorded and `{}` stands in. */
  map(parent: Obj, key: string, hint = HINTS[key]): Obj {
    const v = parent[last(key)];
    if (isObj(v)) return v;
    this.add(key, v == null ? 'is missing' : `must be a mapping, not ${show(v)}`, hint);
    return {};
  }

  requiredString(parent: Obj, key: string): string | undefined {
    const v = parent[last(key)];
    if (typeof v === 'string' && v.trim() !== '') return v;
    this.add(key, v == null ? 'is missing' : `must be a non-empty string, not ${show(v)}`);
    return undefined;
  }

  optionalString(parent: Obj, key: string): string | undefined {
    const v = parent[last(key)];
    if (v == null) return undefined;
    if (isScalar(v)) return String(v);
    this.add(key, `must be a string, not ${show(v)}`);
    return undefined;
  }

  stringMap(parent: Obj, key: string): Record<string, string> {
    const v = parent[last(key)];
    if (v == null) return {};
    if (!isObj(v)) {
      this.add(key, `must be a mapping of names to strings, not ${show(v)}`, 'Write NAME: value.');
      return {};
    }
    const out: Record<string, string> = {};
    for (const [k, item] of Object.entries(v)) {
      if (isScalar(item)) out[k] = String(item);
      else this.add(`${key}.${k}`, `must be a string, not ${show(item)}`);
    }
    return out;
  }

  stringList(parent: Obj, key: string): string[] {
    const v = parent[last(key)];
    if (v == null) return [];
    if (Array.isArray(v) && v.every(isScalar)) return v.map(String);
    this.add(key, `must be a list of strings, not ${show(v)}`);
    return [];
  }

  throwIfAny(): void {
    if (this.list.length === 0) return;
    const all = this.list.map((p) => p.message).join('; ');
    throw DirigentError.fatal(ErrorCode.INVALID_TOOL, `${this.what} file ${this.file}: ${all}.`, {
      location: this.list[0]!.location,
      hint: this.list[0]!.hint,
      details: { problems: this.list.map(({ key, message, hint }) => ({ key, message, hint })) },
    });
  }
}

function last(key: string): string {
  return key.slice(key.lastIndexOf('.') + 1);
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isScalar(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

function show(v: unknown): string {
  if (Array.isArray(v)) return 'a list';
  if (isObj(v)) return 'a mapping';
  return JSON.stringify(v);
}
