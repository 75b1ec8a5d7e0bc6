/**
 * What a JavaScript or TypeScript tool declares, read without running it: @babel/parser parses the
 * file and only literal constants are evaluated, so no code of the tool runs. Two formats:
 * Dirigent's (seed 003's `tool.code.v1` fields as module exports: `description`, `version`,
 * `input_schema`, `output_schema`, `limits`, `permissions`, `required_secrets`, `examples`,
 * `bootstrap` and `execute(input, context)`) and RYE's (`__version__`, `__tool_type__`, `__executor_id__`,
 * `__category__`, `__tool_description__`, `CONFIG_SCHEMA`).
 */
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parse, type ParserPlugin } from '@babel/parser';
import type { Node, Statement } from '@babel/types';
import { parseBootstrapSpec, type BootstrapSpec } from '../services/bootstrap-spec.js';
import { contentHash } from '../directive/parse-directive.js';
import {
  JsLiteralReader,
  locateNode,
  topLevelBindings,
  type JsonValue,
} from './js-literal-reader.js';
import type { JsToolMetadata } from './js-tool-metadata-type.js';
import { JsToolShapeChecker } from './js-tool-shape-checker.js';
import { toolDoesNotParse, toolMissingFields } from '../errors/item-errors.js';

export type { JsonValue } from './js-literal-reader.js';
export type { JsToolExample, JsToolMetadata } from './js-tool-metadata-type.js';

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
  'concurrency',
  'rate_limit',
  'bootstrap',
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
  const { bindings, exported } = topLevelBindings(body);
  const reader = new JsLiteralReader(file, bindings);
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
      throw toolMissingFields(
        'JS',
        file,
        missing.map((name) => ({
          name,
          shown:
            name === 'execute'
              ? '`export async function execute(input, context)`'
              : '`export const description`',
        })),
        "A tool exports description (a string) and execute(input, context) (or RYE's __executor_id__ and CONFIG_SCHEMA).",
      );
    }
  }
  const shape = new JsToolShapeChecker(file, v);
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
    concurrency: v.get('concurrency')?.value,
    rateLimit: v.get('rate_limit')?.value,
    hasExecute,
  };
  const bootstrap = bootstrapOf(file, v.get('bootstrap'));
  if (bootstrap !== undefined) meta.bootstrap = bootstrap;
  return meta;
}

/** The `bootstrap` export, checked; errors are located at its declaration. */
function bootstrapOf(
  file: string,
  declared: { value: JsonValue; node: Node } | undefined,
): BootstrapSpec | undefined {
  if (declared === undefined) return undefined;
  return parseBootstrapSpec(declared.value, {
    subject: `JS tool ${file}`,
    locate: () => locateNode(file, declared.node),
  });
}

function parseModule(file: string, text: string): Statement[] {
  const ext = extname(file).toLowerCase();
  const plugins: ParserPlugin[] = ['.ts', '.mts', '.cts'].includes(ext) ? ['typescript'] : [];
  try {
    return parse(text, { sourceType: 'module', plugins, sourceFilename: file }).program.body;
  } catch (err) {
    const e = err as SyntaxError & { loc?: { line: number; column: number } };
    throw toolDoesNotParse(
      'JS',
      file,
      e.message.replace(/\s*\(\d+:\d+\)$/, ''),
      { file, line: e.loc?.line ?? 1, column: (e.loc?.column ?? 0) + 1 },
      err,
    );
  }
}
