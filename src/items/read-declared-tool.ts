/**
 * What a tool declares, read for validation: RYE's `# ryeos-tool:` header, YAML tools of every
 * `tool_type`, JSON, TOML and shell files (only parsed), and the tools the dispatcher runs (read
 * as it reads them, their schemas compiled as it compiles them).
 */
import { extname } from 'node:path';
import { Ajv } from 'ajv';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import type { SourceLocation } from '../errors/source-location.js';
import { nonEmpty, type Declared } from './check-declared.js';
import type { ItemIssue } from './item-issue.js';
import type { Resolution } from './item-resolver.js';
import { readDeclaredDirective } from './read-declared.js';
import { readToolItem } from './read-tool-item.js';
import { normalizeLineEndings } from './signing/content-hash.js';
import { removeSignatureLine, signatureStyleFor } from './signing/signature-line.js';

/** A mapping, as YAML, JSON and TOML read one. */
type Obj = Record<string, unknown>;

/**
 * What a tool declares, read as the dispatcher reads it (or only parsed, for JSON, TOML, shell
 * and Markdown files); a tool without a description, or whose schemas do not compile, adds to
 * `issues`. Undefined when the file does not parse (`issues` says why).
 */
export async function readDeclaredTool(
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
        ...readDeclaredDirective(file, text, projectDir),
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

/** `text` as YAML when it is a mapping; else undefined. */
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

/** A parsed file's top-level mapping, or why it does not parse. */
type Parsed = { data: Obj } | { issue: ItemIssue };

/** `text` as JSON (its top level when an object, else empty). */
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

/** `text` as TOML. */
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
