/**
 * What search and listings show of an item, read from its text alone: cheap and forgiving, so an
 * item that would not run (a directive with an error, a tool whose Python is broken) is still
 * found, and nothing is executed (Python and JS/TS tools are read by pattern, not run or parsed
 * by their language). Pure: no I/O.
 */
import { basename, extname } from 'node:path';
import type * as Yaml from 'yaml';
import type { ItemKind } from './item-kind.js';
import { parseKnowledge } from './knowledge-item.js';
import { lazyPackage } from '../lazy-package.js';

/** The YAML reader, loaded by the first YAML text read. */
const yamlPackage = lazyPackage<typeof Yaml>('yaml');

/** An item's descriptive fields. */
export interface ItemFields {
  /** Its declared name, or its file's name. */
  name: string;
  title?: string;
  description?: string;
  /** Its declared category, or the folder of its item id. */
  category?: string;
  version?: string;
  tags: string[];
  /** A tool's `tool_type`, a knowledge entry's `entry_type`. */
  type?: string;
  /** When its metadata says it was created or updated (ISO dates, as written). */
  createdAt?: string;
  updatedAt?: string;
  /** Its text for full-text search: the body of a knowledge entry or directive, capped. */
  content: string;
}

/** How much of an item's text is kept for full-text search. */
export const CONTENT_CHARS = 4000;

/** Reads an item's descriptive fields from its text; never throws. */
export function summarizeItem(
  kind: ItemKind,
  itemId: string,
  file: string,
  text: string,
): ItemFields {
  const ext = extname(file).toLowerCase();
  const yaml = ext === '.yaml' || ext === '.yml';
  let meta: Record<string, unknown>;
  let content = text;
  if (kind === 'knowledge') {
    try {
      const k = parseKnowledge(text, file);
      meta = k.metadata;
      content = k.content;
    } catch {
      meta = {};
    }
  } else if (yaml) meta = yamlMapping(text);
  else if (kind === 'directive') meta = directiveMetadata(text);
  else meta = codeMetadata(text);
  const folder = itemId.includes('/') ? itemId.slice(0, itemId.lastIndexOf('/')) : undefined;
  const title = str(meta.title) ?? (kind === 'tool' ? undefined : heading(content));
  const fields: ItemFields = {
    name: str(meta.name) ?? basename(file, extname(file)),
    tags: tagsOf(meta.tags),
    content: content.slice(0, CONTENT_CHARS),
  };
  const optional: [keyof ItemFields, string | undefined][] = [
    ['title', title],
    ['description', str(meta.description) ?? str(meta.__tool_description__)],
    ['category', str(meta.category) ?? str(meta.__category__) ?? folder],
    ['version', str(meta.version) ?? str(meta.__version__)],
    ['type', str(meta.tool_type) ?? str(meta.__tool_type__) ?? str(meta.entry_type)],
    ['createdAt', dateOf(meta.created_at)],
    ['updatedAt', dateOf(meta.updated_at)],
  ];
  for (const [key, value] of optional)
    if (value !== undefined) (fields as unknown as Record<string, unknown>)[key] = value;
  return fields;
}

function yamlMapping(text: string): Record<string, unknown> {
  try {
    const value: unknown = yamlPackage().parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** `<directive name version>` and the `<metadata>` children that describe it. */
function directiveMetadata(text: string): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  const open = /<directive\b([^>]*)>/.exec(text);
  if (open !== null) {
    for (const [, key, value] of open[1]!.matchAll(/(\w+)\s*=\s*"([^"]*)"/g))
      if (key === 'name' || key === 'version') meta[key] = value;
  }
  for (const key of ['description', 'category', 'title', 'tags', 'created_at', 'updated_at']) {
    const m = new RegExp(`<${key}\\b[^>]*>([\\s\\S]*?)</${key}>`).exec(text);
    if (m !== null) meta[key] = unescapeXml(m[1]!.trim());
  }
  if (typeof meta.tags === 'string') {
    const tags = [...(meta.tags as string).matchAll(/<tag\b[^>]*>([^<]*)<\/tag>/g)].map(
      (m) => m[1]!,
    );
    meta.tags = tags.length > 0 ? tags : (meta.tags as string).split(',');
  }
  return meta;
}

/**
 * Python and JS/TS tools: RYE's `__version__ = "…"` constants, and the plain `description = …`,
 * `export const version = …` of Dirigent's and the self-registered formats; a Python module's
 * docstring describes the tool when nothing else does.
 */
function codeMetadata(text: string): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  const assignment =
    /^(?:export\s+)?(?:const\s+|let\s+|var\s+)?(__\w+__|name|description|version|category|tags)\s*(?::\s*[\w[\]<>, ]+)?=\s*(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'|\[([^\]\n]*)\])/gm;
  for (const m of text.matchAll(assignment)) {
    const key = m[1]!;
    if (key in meta) continue;
    meta[key] =
      m[4] !== undefined
        ? [...m[4].matchAll(/["']([^"']*)["']/g)].map((t) => t[1]!)
        : unescapeString(m[2] ?? m[3] ?? '');
  }
  if (meta.description === undefined && meta.__tool_description__ === undefined) {
    const doc = /^(?:#[^\n]*\n|\s)*(?:"""([\s\S]*?)"""|'''([\s\S]*?)''')/.exec(text);
    const first = (doc?.[1] ?? doc?.[2])?.trim().split('\n\n')[0];
    if (first) meta.description = first.replace(/\s+/g, ' ');
  }
  return meta;
}

function heading(text: string): string | undefined {
  return /^#[ \t]+(.+)$/m.exec(text)?.[1]?.trim();
}

function str(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() === '' ? undefined : value.trim();
  if (typeof value === 'number') return String(value);
  return undefined;
}

function tagsOf(value: unknown): string[] {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [];
  return list.map((t) => String(t).trim()).filter((t) => t !== '');
}

function dateOf(value: unknown): string | undefined {
  if (value instanceof Date) return value.toISOString();
  return str(value);
}

function unescapeXml(text: string): string {
  return text
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

function unescapeString(text: string): string {
  return text.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
}
