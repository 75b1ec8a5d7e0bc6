/**
 * Reading RYE's MCP YAML files and checking their keys: a read or YAML syntax error fails at once;
 * {@link McpFileProblems} collects every wrong key so that a single `INVALID_TOOL` names them all.
 */
import { readFile } from 'node:fs/promises';
import { parseDocument, type Document } from 'yaml';
import { LineIndex } from '../directive/line-index.js';
import { locateYamlKey } from '../directive/yaml-location.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';
import { toolYamlInvalid } from '../errors/item-errors.js';
import { cannotRead } from '../errors/file-errors.js';

/** A YAML mapping, as plain data. */
type Obj = Record<string, unknown>;

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
 * The text of an MCP file and its YAML as plain data. Throws `FILE_NOT_FOUND` when it cannot be
 * read and `INVALID_TOOL`, at the line of the error, when it is not valid YAML.
 */
export async function readMcpYaml(file: string): Promise<{ doc: unknown; text: string }> {
  const text = await readText(file);
  return { doc: parseYaml(text, file), text };
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    throw cannotRead(file, e, { what: 'MCP file' });
  }
}

/** The YAML as plain data; the `# rye:signed:…` first line is a comment and needs no care. */
function parseYaml(text: string, file: string): unknown {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    throw toolYamlInvalid(
      file,
      e.message.split('\n')[0] ?? '',
      new LineIndex(file, text).at(e.pos[0]),
    );
  }
  return doc.toJS() as unknown;
}

/**
 * Collects what is wrong with one file, so a single error lists every wrong key. Keys are dotted
 * paths (`config.url`), read from the mapping `parent` by their last part.
 */
export class McpFileProblems {
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

  /** A non-empty string; when it is missing or wrong, the problem is recorded. */
  requiredString(parent: Obj, key: string): string | undefined {
    const v = parent[last(key)];
    if (typeof v === 'string' && v.trim() !== '') return v;
    this.add(key, v == null ? 'is missing' : `must be a non-empty string, not ${show(v)}`);
    return undefined;
  }

  /** A string (a number or boolean is turned into one); `undefined` when absent. */
  optionalString(parent: Obj, key: string): string | undefined {
    const v = parent[last(key)];
    if (v == null) return undefined;
    if (isScalar(v)) return String(v);
    this.add(key, `must be a string, not ${show(v)}`);
    return undefined;
  }

  /** A mapping of names to strings; `{}` when absent (or wrong, the problem recorded). */
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

  /** A list of strings; `[]` when absent (or wrong, the problem recorded). */
  stringList(parent: Obj, key: string): string[] {
    const v = parent[last(key)];
    if (v == null) return [];
    if (Array.isArray(v) && v.every(isScalar)) return v.map(String);
    this.add(key, `must be a list of strings, not ${show(v)}`);
    return [];
  }

  /** Throws one fatal `INVALID_TOOL` listing every problem recorded, located at the first. */
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

/** A value as a message shows it: `a list`, `a mapping`, or its JSON. */
export function show(v: unknown): string {
  if (Array.isArray(v)) return 'a list';
  if (isObj(v)) return 'a mapping';
  return JSON.stringify(v);
}
