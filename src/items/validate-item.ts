/**
 * What an item must be before it is signed (RYE reference §5.6 step 5): it reads as its kind, its
 * declared name and category agree with where the file is, its version is semver, and it says
 * what it is. RYE's own files validate, in its older and its current layouts; fields Dirigent
 * does not know are left alone.
 */
import { basename, extname } from 'node:path';
import { Ajv } from 'ajv';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { diagnosticsOf } from '../directive/diagnostics.js';
import { DirectiveLoader } from '../engine/directive-loader.js';
import { DirigentError } from '../errors/dirigent-error.js';
import type { SourceLocation } from '../errors/source-location.js';
import type { ItemKind } from './item-kind.js';
import type { Resolution } from './item-resolver.js';
import { parseKnowledge } from './knowledge-item.js';
import { readToolItem } from './read-tool-item.js';
import { normalizeLineEndings } from './signing/content-hash.js';
import { removeSignatureLine, signatureStyleFor } from './signing/signature-line.js';

/** One thing wrong with an item, located when it can be. */
export interface ItemIssue {
  message: string;
  location?: SourceLocation;
  hint?: string;
  /**
   * `warning`: worth saying, but no reason to refuse the signature (a knowledge entry whose
   * category is not its folder: RYE's own entries file categories by topic). Absent: an error.
   */
  severity?: 'warning';
}

/** Semantic versioning: `1.2.0`, with an optional pre-release and build (`1.2.0-rc.1+b5`). */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

type Obj = Record<string, unknown>;

/** What {@link validateItem} checks of the fields an item declares. */
interface Declared {
  name?: unknown;
  /** Another name the item may declare: a knowledge entry may be named by its item id. */
  alsoNamed?: string;
  category?: unknown;
  /** Whether a category that is not the folder is only a warning (knowledge). */
  categoryIsTopic?: boolean;
  version?: unknown;
  /** Whether the format requires a version (RYE's tools, its XML directives). */
  versionRequired?: boolean;
}

/**
 * The problems that keep `file` (item `itemId` of `kind`, text `text`) from being signed; none
 * when it may be.
 *
 * - the declared name, if the format has one, is the file's name without extension (a knowledge
 *   entry may also be named by its item id, as RYE's current entries are);
 * - the declared category, if any, is the item id's folder (`rye/bash/bash` → `rye/bash`); for
 *   knowledge a different category is a warning only, since RYE's own signed entries file their
 *   categories by topic (`ryeos/core` for `ryeos/core/node/http-api`);
 * - the version, where declared, is semver; RYE's Python and JS tools (`__version__`, the
 *   `# ryeos-tool:` header) and its XML directives must declare one;
 * - a directive (or a graph) parses and compiles under the project's policy;
 * - a tool reads as a tool (Python, YAML, JS/TS; RYE's `# ryeos-tool:` header; JSON, TOML and
 *   shell files only parse) and has a description. A YAML tool with `executor_id: null` that is
 *   not a primitive (RYE's terminal executors) is read, not refused: RYE signs such files;
 * - knowledge front matter parses, and the entry has a description or a title (`title`, or a
 *   `# heading`).
 *
 * @param projectDir the project, whose policy directives compile under and whose Python reads
 *   Python tools.
 * @throws DirigentError only when the project itself is broken (`INVALID_CONFIG`).
 */
export async function validateItem(
  kind: ItemKind,
  itemId: string,
  file: string,
  text: string,
  projectDir: string,
): Promise<ItemIssue[]> {
  const issues: ItemIssue[] = [];
  const at: SourceLocation = { file, line: 1, column: 1 };
  let declared: Declared | undefined;
  try {
    declared =
      kind === 'directive'
        ? readDirective(file, text, projectDir)
        : kind === 'knowledge'
          ? readKnowledge(itemId, file, text, at, issues)
          : await readTool(itemId, file, text, projectDir, at, issues);
  } catch (err) {
    if (!(err instanceof DirigentError)) throw err;
    for (const d of diagnosticsOf(err)) {
      if (d.severity !== 'error') continue;
      issues.push({
        message: d.message,
        ...(d.loc && { location: d.loc }),
        ...(d.hint && { hint: d.hint }),
      });
    }
  }
  if (declared !== undefined) issues.push(...checkDeclared(declared, itemId, file, text));
  return issues;
}

function checkDeclared(
  declared: Declared,
  itemId: string,
  file: string,
  text: string,
): ItemIssue[] {
  const issues: ItemIssue[] = [];
  const at = (field: string) => fieldLocation(file, text, field);
  const stem = basename(file, extname(file));
  const slash = itemId.lastIndexOf('/');
  const folder = slash === -1 ? '' : itemId.slice(0, slash);
  const { name, category, version } = declared;
  if (typeof name === 'string' && name !== '' && name !== stem && name !== declared.alsoNamed) {
    issues.push({
      message: `It is named "${name}" but its file is "${basename(file)}".`,
      location: at('name'),
      hint: `Rename one: name "${stem}", or the file ${name}${extname(file)}.`,
    });
  }
  if (category !== undefined && category !== null) {
    const given = typeof category === 'string' ? category.replace(/^\/+|\/+$/g, '') : category;
    if (given !== folder) {
      issues.push({
        message: `Its category "${String(category)}" is not its folder "${folder}" (item ${itemId}).`,
        location: at('category'),
        hint:
          folder === ''
            ? 'Remove the category, or move the file into a folder of that name.'
            : `Write category "${folder}", or move the file into the folder of its category.`,
        ...(declared.categoryIsTopic && { severity: 'warning' as const }),
      });
    }
  }
  if (version === undefined || version === null || version === '') {
    if (declared.versionRequired) {
      issues.push({
        message: 'It declares no version.',
        location: { file, line: 1, column: 1 },
        hint: 'Add a semantic version such as "1.0.0".',
      });
    }
  } else if (typeof version !== 'string' || !SEMVER.test(version)) {
    issues.push({
      message: `Its version ${JSON.stringify(version)} is not a semantic version.`,
      location: at('version'),
      hint: 'Write MAJOR.MINOR.PATCH as a string, e.g. version: "1.2.0".',
    });
  }
  return issues;
}

/**
 * Where `field` is declared in `text`: the first line that declares it in one of the notations
 * items use (YAML or front matter `field:`, RYE's `# field:` header, Python `__field__ =` or
 * `field =`, TOML `field =`, JSON `"field":`, an XML `field="…"` attribute of `<directive>` or a
 * `<field>` element); line 1 when none does. Top-level keys only for YAML and Python (no
 * indentation), so an input named `name` is not taken for the item's name.
 */
function fieldLocation(file: string, text: string, field: string): SourceLocation {
  const patterns = [
    new RegExp(`^(?:#\\s*)?(${field})\\s*:`),
    new RegExp(`^(?:__)?(${field})(?:__)?\\s*=`),
    new RegExp(`"(${field})"\\s*:`),
    new RegExp(`<directive\\b[^>]*\\s(${field})\\s*=`),
    new RegExp(`<(${field})>`),
  ];
  const lines = normalizeLineEndings(text).split('\n');
  for (const [index, line] of lines.entries()) {
    for (const pattern of patterns) {
      const m = pattern.exec(line);
      if (m) return { file, line: index + 1, column: m.index + m[0].indexOf(m[1]!) + 1 };
    }
  }
  return { file, line: 1, column: 1 };
}

/** A directive or graph, compiled as the engine would (throws its diagnostics). */
function readDirective(file: string, text: string, projectDir: string): Declared {
  const loaded = new DirectiveLoader(projectDir, false).fromText(file, text);
  const d = loaded.compiled.directive;
  const xml = d.source.format === 'directive' && /^```xml\s*$/m.test(text);
  return {
    name: d.name,
    category: d.category,
    version: d.version,
    versionRequired: xml,
  };
}

function readKnowledge(
  itemId: string,
  file: string,
  text: string,
  at: SourceLocation,
  issues: ItemIssue[],
): Declared {
  const entry = parseKnowledge(text, file);
  const meta = entry.metadata;
  const heading = /^#\s+\S/m.test(entry.content);
  if (!nonEmpty(meta.description) && !nonEmpty(meta.title) && !heading) {
    issues.push({
      message: 'It has no description and no title.',
      location: at,
      hint: 'Add description: "…" (or title: "…") to its front matter, or a "# Title" line.',
    });
  }
  // RYE's current layout names an entry by its item id.
  if (typeof meta.id === 'string' && meta.id !== itemId && meta.id !== basename(itemId)) {
    issues.push({
      message: `Its id "${meta.id}" is not its item id "${itemId}".`,
      location: fieldLocation(file, text, 'id'),
      hint: `Write id: ${itemId}, or move the file to match its id.`,
    });
  }
  return {
    name: meta.name,
    alsoNamed: itemId,
    category: meta.category,
    categoryIsTopic: true,
    version: meta.version,
  };
}

async function readTool(
  itemId: string,
  file: string,
  text: string,
  projectDir: string,
  at: SourceLocation,
  issues: ItemIssue[],
): Promise<Declared | undefined> {
  const ext = extname(file).toLowerCase();
  const body = removeSignatureLine(normalizeLineEndings(text), signatureStyleFor(file));
  const needsDescription = (description: unknown) => {
    if (nonEmpty(description)) return;
    issues.push({
      message: 'It has no description.',
      location: at,
      hint: 'Describe what the tool does (description, or __tool_description__ in Python).',
    });
  };

  const header = ext === '.py' ? ryeosToolHeader(body) : undefined;
  if (header !== undefined) {
    needsDescription(header.description ?? header.tool_description);
    return {
      name: header.name,
      category: header.category,
      version: header.version,
      versionRequired: true,
    };
  }
  if (ext === '.yaml' || ext === '.yml') {
    const root = parseYamlObject(body);
    if (root?.tool_type === 'graph') {
      return {
        ...readDirective(file, text, projectDir),
        category: root.category,
        versionRequired: true,
      };
    }
    if (root?.tool_type === 'mcp_server' || root?.tool_type === 'config') {
      return { name: root.name, category: root.category, version: root.version };
    }
    if (root !== undefined && root.executor_id === null && root.tool_type !== 'primitive') {
      needsDescription(root.description);
      return { name: root.name, category: root.category, version: root.version };
    }
  }
  if (ext === '.json' || ext === '.toml' || ext === '.sh' || ext === '.md') {
    const read =
      ext === '.json'
        ? parseJson(body, at)
        : ext === '.toml'
          ? parseTomlText(body, at)
          : { data: {} };
    if ('issue' in read) {
      issues.push(read.issue);
      return undefined;
    }
    const { data } = read;
    return { name: data.name, category: data.category, version: data.version };
  }

  const resolution: Resolution = {
    kind: 'tool',
    itemId,
    file,
    space: 'project',
    shadowed: [],
    alsoFound: [],
  };
  const item = await readToolItem(resolution, projectDir);
  needsDescription(item.description);
  issues.push(...schemaIssues(item.paramsSchema, item.outputSchema, at));
  const source = (item.source ?? {}) as Obj;
  const rye = item.format !== 'yaml' && source.format === 'rye';
  return {
    name: item.format === 'javascript' ? undefined : source.name,
    category: item.category,
    version: item.version,
    versionRequired: rye,
  };
}

/**
 * RYE's current Python tool header: a `# ryeos-tool:` comment block at the top of the file whose
 * lines, without their `#`, are YAML (`category`, `version`, `tool_type`, `executor_id`,
 * `description` or `tool_description`).
 */
function ryeosToolHeader(body: string): Obj | undefined {
  const lines = body.replace(/^#!\/[^\n]*\n/, '').split('\n');
  const start = lines.findIndex((l) => /^#\s*ryeos-tool:\s*$/.test(l));
  if (start === -1 || lines.slice(0, start).some((l) => !/^\s*(#.*)?$/.test(l))) return undefined;
  const block: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!/^#( |$)/.test(line)) break;
    block.push(line.slice(2));
  }
  const value = parseYamlObject(block.join('\n'));
  return value ?? {};
}

/**
 * Whether the tool's schemas compile as the dispatcher compiles them before each call (ajv, not
 * strict): a schema that does not would make every call of the signed tool fail.
 */
function schemaIssues(
  params: Record<string, unknown>,
  output: Record<string, unknown> | undefined,
  at: SourceLocation,
): ItemIssue[] {
  // A fresh instance: ajv keeps every schema it compiles, and this one is used once.
  const ajv = new Ajv({ allErrors: true, strict: false });
  const issues: ItemIssue[] = [];
  for (const [which, schema] of [
    ['parameter', params],
    ['output', output],
  ] as const) {
    if (schema === undefined) continue;
    try {
      ajv.compile(schema);
    } catch (err) {
      issues.push({
        message: `Its ${which} schema is not valid JSON Schema: ${(err as Error).message}`,
        location: at,
        hint: `Fix the ${which} schema (https://json-schema.org); the tool could not be called with it.`,
      });
    }
  }
  return issues;
}

function parseYamlObject(text: string): Obj | undefined {
  try {
    const value: unknown = parseYaml(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Obj)
      : undefined;
  } catch {
    return undefined;
  }
}

type Parsed = { data: Obj } | { issue: ItemIssue };

function parseJson(text: string, at: SourceLocation): Parsed {
  try {
    const value: unknown = JSON.parse(text);
    const object = typeof value === 'object' && value !== null && !Array.isArray(value);
    return { data: object ? (value as Obj) : {} };
  } catch (err) {
    return {
      issue: {
        message: `It is not valid JSON: ${(err as Error).message}`,
        location: at,
        hint: 'Fix the JSON syntax.',
      },
    };
  }
}

function parseTomlText(text: string, at: SourceLocation): Parsed {
  try {
    return { data: parseToml(text) as Obj };
  } catch (err) {
    return {
      issue: {
        message: `It is not valid TOML: ${(err as Error).message.split('\n')[0]}`,
        location: at,
        hint: 'Fix the TOML syntax.',
      },
    };
  }
}

function nonEmpty(value: unknown): boolean {
  return typeof value === 'string' && value.trim() !== '';
}
