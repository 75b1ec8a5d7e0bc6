/**
 * What a JavaScript or TypeScript tool declares, read without running it: @babel/parser parses the
 * file and only literal constants are evaluated, so no code of the tool runs. Two formats:
 * Dirigent's (seed 003's `tool.code.v1` fields as module exports: `description`, `version`,
 * `input_schema`, `output_schema`, `limits`, `permissions`, `required_secrets`, `examples` and
 * `execute(input, context)`) and RYE's (`__version__`, `__tool_type__`, `__executor_id__`,
 * `__category__`, `__tool_description__`, `CONFIG_SCHEMA`).
 */
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parse, type ParserPlugin } from '@babel/parser';
import type { Expression, Node, Statement } from '@babel/types';
import { contentHash } from '../directive/parse-directive.js';
import { closest } from '../errors/did-you-mean.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';

/** A JSON value, as the literal constants of a tool evaluate to. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [k: string]: JsonValue };

/** One worked example of a tool (`examples`). */
export interface JsToolExample {
  input: Record<string, unknown>;
  output?: unknown;
  description?: string;
}

/** The declarations of a JS/TS tool file. */
export interface JsToolMetadata {
  /** `rye` when the file declares any of RYE's constants, else `dirigent`. */
  format: 'dirigent' | 'rye';
  description: string | undefined;
  version: string | undefined;
  /** RYE's `__executor_id__`. */
  executorId: string | undefined;
  /** RYE's `__tool_type__`. */
  toolType: string | undefined;
  /** RYE's `__category__`. */
  category: string | undefined;
  /** JSON Schema of the input (`input_schema`, or RYE's `CONFIG_SCHEMA`). */
  inputSchema: Record<string, unknown> | undefined;
  outputSchema: Record<string, unknown> | undefined;
  /** `limits.memory_mb` and `limits.timeout_ms`; undefined when not declared. */
  limits: { memoryMb: number | undefined; timeoutMs: number | undefined };
  /** `permissions.network`: no network (default), every host, or these hosts (`host[:port]`). */
  network: boolean | string[];
  /** Names of the secrets the tool reads from `context.secrets`. */
  requiredSecrets: string[];
  examples: JsToolExample[];
  /** Whether the module exports `execute`. */
  hasExecute: boolean;
  /** SHA-256 of the file content this was read from (keys warm sandbox hosts). */
  hash?: string;
}

/** Exports of the Dirigent format that are read as literals. */
const DIRIGENT_FIELDS = [
  'description',
  'version',
  'input_schema',
  'output_schema',
  'limits',
  'permissions',
  'required_secrets',
  'examples',
] as const;
/** RYE's constants, read whether exported or not (RYE's own examples do both). */
const RYE_FIELDS = [
  '__version__',
  '__tool_type__',
  '__executor_id__',
  '__category__',
  '__tool_description__',
  'CONFIG_SCHEMA',
] as const;
const LIMIT_KEYS = ['memory_mb', 'timeout_ms', 'cpu_percent'];
const PERMISSION_KEYS = ['network'];
/** `host`, `host:port`, `[ipv6]` or `[ipv6]:port`: what Deno's `--allow-net` takes. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const cache = new Map<string, { hash: string; meta: JsToolMetadata }>();

/**
 * Reads the metadata of the JS/TS tool in `file` (`.ts`, `.mts`, `.js`, `.mjs`), caching it by
 * content. Throws a fatal `INVALID_TOOL` located at `file:line:column` when the file does not
 * parse, a metadata export is not a literal, a Dirigent-format tool lacks `description` or
 * `execute`, or a field has the wrong shape.
 */
export async function readJsToolMetadata(file: string): Promise<JsToolMetadata> {
  const text = await readFile(file, 'utf8');
  const hash = contentHash(text);
  const cached = cache.get(file);
  if (cached?.hash === hash) return cached.meta;
  const meta = { ...parseJsToolMetadata(file, text), hash };
  cache.set(file, { hash, meta });
  return meta;
}

/** The metadata of a tool's source text (what {@link readJsToolMetadata} does after reading). */
export function parseJsToolMetadata(file: string, text: string): JsToolMetadata {
  const body = parseModule(file, text);
  const { bindings, exported } = topLevel(body);
  const reader = new LiteralReader(file, bindings);
  const value = (name: string, local: string | undefined): JsonValue | undefined =>
    local === undefined ? undefined : reader.binding(local, name);
  const v = new Map<string, { value: JsonValue; node: Node }>();
  for (const name of DIRIGENT_FIELDS) {
    const local = exported.get(name);
    const val = value(name, local);
    if (val !== undefined) v.set(name, { value: val, node: bindings.get(local!)!.node });
  }
  for (const name of RYE_FIELDS) {
    const local = exported.get(name) ?? (bindings.has(name) ? name : undefined);
    const val = value(name, local);
    if (val !== undefined) v.set(name, { value: val, node: bindings.get(local!)!.node });
  }
  const hasExecute = exported.has('execute');
  const rye = RYE_FIELDS.some((f) => v.has(f));
  if (!rye) {
    const missing = [
      ...(v.has('description') ? [] : ['description']),
      ...(hasExecute ? [] : ['execute']),
    ];
    if (missing.length > 0) {
      const what = missing.map((m) =>
        m === 'execute'
          ? '`export async function execute(input, context)`'
          : '`export const description`',
      );
      throw DirigentError.fatal(
        ErrorCode.INVALID_TOOL,
        `JS tool ${file} is missing ${what.join(' and ')}.`,
        {
          location: { file, line: 1, column: 1 },
          hint: "A tool exports description (a string) and execute(input, context) (or RYE's __executor_id__ and CONFIG_SCHEMA).",
          details: { missing },
        },
      );
    }
  }
  const shape = new ShapeChecker(file, v);
  const meta: JsToolMetadata = {
    format: rye ? 'rye' : 'dirigent',
    description: rye
      ? (shape.string('__tool_description__') ?? shape.string('description'))
      : shape.string('description'),
    version: rye
      ? (shape.string('__version__') ?? shape.string('version'))
      : (shape.string('version') ?? shape.string('__version__')),
    executorId: shape.string('__executor_id__'),
    toolType: shape.string('__tool_type__'),
    category: shape.string('__category__'),
    inputSchema: shape.object('input_schema') ?? shape.object('CONFIG_SCHEMA'),
    outputSchema: shape.object('output_schema'),
    limits: shape.limits(),
    network: shape.network(),
    requiredSecrets: shape.secrets(),
    examples: shape.examples(),
    hasExecute,
  };
  return meta;
}

function parseModule(file: string, text: string): Statement[] {
  const ext = extname(file).toLowerCase();
  const plugins: ParserPlugin[] = ['.ts', '.mts', '.cts'].includes(ext) ? ['typescript'] : [];
  try {
    return parse(text, { sourceType: 'module', plugins, sourceFilename: file }).program.body;
  } catch (err) {
    const e = err as SyntaxError & { loc?: { line: number; column: number } };
    throw DirigentError.fatal(
      ErrorCode.INVALID_TOOL,
      `JS tool ${file} does not parse: ${e.message.replace(/\s*\(\d+:\d+\)$/, '')}.`,
      {
        location: { file, line: e.loc?.line ?? 1, column: (e.loc?.column ?? 0) + 1 },
        hint: 'Fix the syntax error; the tool is read without being run.',
        cause: err,
      },
    );
  }
}

/** A top-level declaration: its initialiser (if any) and whether it is a `const`. */
interface Binding {
  node: Node;
  init: Expression | null | undefined;
  constant: boolean;
}

/** Top-level bindings by local name, and exported names to their local names. */
function topLevel(body: Statement[]): {
  bindings: Map<string, Binding>;
  exported: Map<string, string>;
} {
  const bindings = new Map<string, Binding>();
  const exported = new Map<string, string>();
  const declare = (decl: Node | null | undefined, isExport: boolean) => {
    if (!decl) return;
    if (decl.type === 'VariableDeclaration') {
      for (const d of decl.declarations) {
        if (d.id.type !== 'Identifier') continue;
        bindings.set(d.id.name, { node: d, init: d.init, constant: decl.kind === 'const' });
        if (isExport) exported.set(d.id.name, d.id.name);
      }
    } else if (
      (decl.type === 'FunctionDeclaration' || decl.type === 'ClassDeclaration') &&
      decl.id
    ) {
      bindings.set(decl.id.name, { node: decl, init: undefined, constant: false });
      if (isExport) exported.set(decl.id.name, decl.id.name);
    }
  };
  for (const stmt of body) {
    if (stmt.type === 'ExportNamedDeclaration') {
      declare(stmt.declaration, true);
      if (stmt.source) continue; // re-exports from another module: not read
      for (const s of stmt.specifiers) {
        if (s.type !== 'ExportSpecifier') continue;
        const name = s.exported.type === 'Identifier' ? s.exported.name : s.exported.value;
        exported.set(name, s.local.name);
      }
    } else {
      declare(stmt, false);
    }
  }
  return { bindings, exported };
}

/** Evaluates literal expressions, naming and locating the first part that is not one. */
class LiteralReader {
  private readonly evaluating = new Set<string>();
  constructor(
    private readonly file: string,
    private readonly bindings: Map<string, Binding>,
  ) {}

  /** The value of the top-level constant `local`, read for the export `name` at `path`. */
  binding(local: string, name: string, path = name): JsonValue | undefined {
    const b = this.bindings.get(local);
    if (b === undefined) return undefined;
    if (b.init === undefined || b.init === null) {
      if (b.node.type === 'VariableDeclarator')
        throw this.notLiteral(name, path, b.node, 'a declaration without a value');
      throw this.notLiteral(name, path, b.node, article(describeNode(b.node)));
    }
    if (!b.constant)
      throw this.notLiteral(
        name,
        path,
        b.node,
        'not a const',
        `Declare it as \`const ${local} = …\`.`,
      );
    if (this.evaluating.has(local))
      throw this.notLiteral(name, path, b.node, 'defined in terms of itself');
    this.evaluating.add(local);
    try {
      return this.value(b.init, name, path);
    } finally {
      this.evaluating.delete(local);
    }
  }

  private value(node: Node, name: string, path: string): JsonValue {
    switch (node.type) {
      case 'StringLiteral':
      case 'NumericLiteral':
      case 'BooleanLiteral':
        return node.value;
      case 'NullLiteral':
        return null;
      case 'TemplateLiteral':
        if (node.expressions.length > 0)
          throw this.notLiteral(name, path, node, 'a template literal with `${…}` expressions');
        return node.quasis.map((q) => q.value.cooked ?? q.value.raw).join('');
      case 'UnaryExpression':
        if (
          (node.operator === '-' || node.operator === '+') &&
          node.argument.type === 'NumericLiteral'
        )
          return node.operator === '-' ? -node.argument.value : node.argument.value;
        break;
      case 'TSAsExpression':
      case 'TSSatisfiesExpression':
      case 'TSNonNullExpression':
      case 'TSTypeAssertion':
      case 'ParenthesizedExpression':
        return this.value(node.expression, name, path);
      case 'Identifier': {
        const b = this.bindings.get(node.name);
        if (b !== undefined && b.constant && b.init) return this.binding(node.name, name, path)!;
        break;
      }
      case 'ArrayExpression': {
        const out: JsonValue[] = [];
        node.elements.forEach((el, i) => {
          if (el === null)
            throw this.notLiteral(name, `${path}[${i}]`, node, 'an array with a hole');
          if (el.type === 'SpreadElement') {
            const spread = this.value(el.argument, name, `${path}[${i}]`);
            if (!Array.isArray(spread))
              throw this.notLiteral(
                name,
                `${path}[${i}]`,
                el,
                'a spread of something not an array',
              );
            out.push(...spread);
          } else out.push(this.value(el, name, `${path}[${i}]`));
        });
        return out;
      }
      case 'ObjectExpression': {
        const out: { [k: string]: JsonValue } = {};
        for (const prop of node.properties) {
          if (prop.type === 'SpreadElement') {
            const spread = this.value(prop.argument, name, path);
            if (spread === null || typeof spread !== 'object' || Array.isArray(spread))
              throw this.notLiteral(name, path, prop, 'a spread of something not an object');
            Object.assign(out, spread);
            continue;
          }
          const key = propertyKey(prop);
          if (key === undefined) throw this.notLiteral(name, path, prop, `a ${describeNode(prop)}`);
          const at = /^[A-Za-z_$][\w$]*$/.test(key)
            ? `${path}.${key}`
            : `${path}[${JSON.stringify(key)}]`;
          // Defined like this so that a key `__proto__` stays an own data property.
          Object.defineProperty(out, key, {
            value: this.value((prop as { value: Node }).value, name, at),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        return out;
      }
    }
    throw this.notLiteral(name, path, node, article(describeNode(node)));
  }

  private notLiteral(
    name: string,
    path: string,
    node: Node,
    what: string,
    hint?: string,
  ): DirigentError {
    const where = path === name ? '' : ` (at ${path})`;
    return DirigentError.fatal(
      ErrorCode.INVALID_TOOL,
      `JS tool ${this.file}: export \`${name}\` is not a literal${where}: it is ${what}.`,
      {
        location: locate(this.file, node),
        hint:
          hint ??
          'Metadata is read without running the tool: write it out with strings, numbers, booleans, null, arrays and objects.',
        details: { export: name, path },
      },
    );
  }
}

/** The key of a plain `key: value` object property, or undefined for methods, getters, computed keys. */
function propertyKey(prop: Node): string | undefined {
  if (prop.type !== 'ObjectProperty') return undefined;
  if (prop.computed) return prop.key.type === 'StringLiteral' ? prop.key.value : undefined;
  if (prop.key.type === 'Identifier') return prop.key.name;
  if (prop.key.type === 'StringLiteral') return prop.key.value;
  if (prop.key.type === 'NumericLiteral') return String(prop.key.value);
  return undefined;
}

/** `CallExpression` → `call expression`. */
function describeNode(node: Node): string {
  if (node.type === 'ObjectMethod') return 'method';
  if (node.type === 'ObjectProperty') return 'computed property';
  if (node.type === 'Identifier') return `reference to \`${node.name}\``;
  return node.type
    .replace(/^TS/, 'TypeScript')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/\b(?!TypeScript)[A-Z]/g, (c) => c.toLowerCase());
}

/** `call expression` → `a call expression`, `arrow function expression` → `an arrow …`. */
function article(what: string): string {
  return /^[aeiou]/.test(what) ? `an ${what}` : `a ${what}`;
}

function locate(file: string, node: Node): SourceLocation {
  return { file, line: node.loc?.start.line ?? 1, column: (node.loc?.start.column ?? 0) + 1 };
}

/** Checks the shape of each field, naming the field path of what is wrong. */
class ShapeChecker {
  constructor(
    private readonly file: string,
    private readonly values: Map<string, { value: JsonValue; node: Node }>,
  ) {}

  string(name: string): string | undefined {
    const v = this.values.get(name);
    if (v === undefined) return undefined;
    if (typeof v.value !== 'string') throw this.bad(name, name, 'must be a string', v.value);
    return v.value;
  }

  object(name: string): Record<string, unknown> | undefined {
    const v = this.values.get(name);
    if (v === undefined) return undefined;
    if (!isObject(v.value)) throw this.bad(name, name, 'must be an object', v.value);
    return v.value;
  }

  limits(): JsToolMetadata['limits'] {
    const limits = this.object('limits') ?? {};
    this.knownKeys('limits', limits, LIMIT_KEYS);
    const positive = (key: string): number | undefined => {
      const n = limits[key];
      if (n === undefined) return undefined;
      if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0)
        throw this.bad('limits', `limits.${key}`, 'must be a positive number', n);
      return n;
    };
    positive('cpu_percent');
    return { memoryMb: positive('memory_mb'), timeoutMs: positive('timeout_ms') };
  }

  network(): boolean | string[] {
    const permissions = this.object('permissions') ?? {};
    this.knownKeys('permissions', permissions, PERMISSION_KEYS);
    const network = permissions.network;
    if (network === undefined) return false;
    if (typeof network === 'boolean') return network;
    const path = 'permissions.network';
    const expected = 'must be true, false or a list of hosts (`host` or `host:port`)';
    if (!Array.isArray(network)) throw this.bad('permissions', path, expected, network);
    return network.map((h, i) => {
      if (typeof h !== 'string' || !HOST.test(h))
        throw this.bad(
          'permissions',
          `${path}[${i}]`,
          'must be a host or host:port, without a scheme or path (e.g. `api.example.com`)',
          h,
        );
      return h;
    });
  }

  secrets(): string[] {
    const v = this.values.get('required_secrets');
    if (v === undefined) return [];
    if (!Array.isArray(v.value))
      throw this.bad('required_secrets', 'required_secrets', 'must be a list of names', v.value);
    return v.value.map((s, i) => {
      if (typeof s !== 'string' || !SECRET_NAME.test(s))
        throw this.bad(
          'required_secrets',
          `required_secrets[${i}]`,
          'must be a name of letters, digits and underscores',
          s,
        );
      return s;
    });
  }

  examples(): JsToolExample[] {
    const v = this.values.get('examples');
    if (v === undefined) return [];
    if (!Array.isArray(v.value))
      throw this.bad(
        'examples',
        'examples',
        'must be a list of { input, output, description }',
        v.value,
      );
    return v.value.map((ex, i) => {
      if (!isObject(ex) || !isObject(ex.input))
        throw this.bad(
          'examples',
          `examples[${i}]`,
          'must be an object with an object `input`',
          ex,
        );
      if (ex.description !== undefined && typeof ex.description !== 'string')
        throw this.bad(
          'examples',
          `examples[${i}].description`,
          'must be a string',
          ex.description,
        );
      return {
        input: ex.input,
        ...(ex.output !== undefined && { output: ex.output }),
        ...(typeof ex.description === 'string' && { description: ex.description }),
      };
    });
  }

  private knownKeys(name: string, obj: Record<string, unknown>, known: string[]): void {
    for (const key of Object.keys(obj)) {
      if (known.includes(key)) continue;
      const guess = closest(key, known);
      throw DirigentError.fatal(
        ErrorCode.INVALID_TOOL,
        `JS tool ${this.file}: \`${name}.${key}\` is not a known field${guess ? ` (did you mean \`${guess}\`?)` : ''}.`,
        {
          location: locate(this.file, this.values.get(name)!.node),
          hint: `${name} may hold ${known.join(', ')}.`,
          details: { path: `${name}.${key}` },
        },
      );
    }
  }

  private bad(name: string, path: string, expected: string, got: unknown): DirigentError {
    return DirigentError.fatal(
      ErrorCode.INVALID_TOOL,
      `JS tool ${this.file}: \`${path}\` ${expected}, not ${JSON.stringify(got)}.`,
      { location: locate(this.file, this.values.get(name)!.node), details: { path } },
    );
  }
}

function isObject(v: unknown): v is Record<string, JsonValue> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
