/**
 * Knowledge items (RYE reference §3.5, §5.2): Markdown under `.ai/knowledge/` whose metadata is
 * front matter after the signature line, either a `---` block (RYE's newer files) or a
 * ```` ```yaml ```` fence (its older ones), followed by the content. YAML knowledge files are the
 * metadata alone, with the content under `content`. Pure: no I/O.
 */
import { extname } from 'node:path';
import type * as Yaml from 'yaml';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { normalizeLineEndings } from './signing/content-hash.js';
import { removeSignatureLine, signatureStyleFor } from './signing/signature-line.js';
import { lazyPackage } from '../lazy-package.js';

/** The YAML reader, loaded by the first YAML text read. */
const yamlPackage = lazyPackage<typeof Yaml>('yaml');

/** A knowledge entry, read. */
export interface KnowledgeItem {
  /** Its front matter, as written (`name`, `title`, `description`, `category`, `version`, `tags`…). */
  metadata: Record<string, unknown>;
  /** The text after the front matter. */
  content: string;
  /** How the front matter was written. */
  frontMatter: 'dashes' | 'yaml-fence' | 'yaml-file' | 'none';
  /** The line the content starts on (1-based), for locating problems. */
  contentLine: number;
}

const DASHES = /^---[ \t]*\n([\s\S]*?)\n---[ \t]*(?:\n|$)/;
const FENCE = /^```ya?ml[ \t]*\n([\s\S]*?)\n```[ \t]*(?:\n|$)/;

/**
 * Reads a knowledge file's text. Throws `INVALID_ITEM` (located) when its front matter is not a
 * YAML mapping.
 */
export function parseKnowledge(text: string, file: string): KnowledgeItem {
  const normal = normalizeLineEndings(text);
  const rest = removeSignatureLine(normal, signatureStyleFor(file));
  const offset = lineCount(normal.slice(0, normal.length - rest.length));
  const ext = extname(file).toLowerCase();
  if (ext === '.yaml' || ext === '.yml') {
    const metadata = readMapping(rest, file, offset + 1);
    const content = typeof metadata.content === 'string' ? metadata.content : '';
    return { metadata, content, frontMatter: 'yaml-file', contentLine: offset + 1 };
  }
  const match = DASHES.exec(rest) ?? FENCE.exec(rest);
  if (match === null)
    return { metadata: {}, content: rest, frontMatter: 'none', contentLine: offset + 1 };
  const metadata = readMapping(match[1]!, file, offset + 2);
  return {
    metadata,
    content: rest.slice(match[0].length).replace(/^\n+/, ''),
    frontMatter: match[0].startsWith('---') ? 'dashes' : 'yaml-fence',
    contentLine: offset + lineCount(match[0]) + 1,
  };
}

function readMapping(yaml: string, file: string, line: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = yamlPackage().parse(yaml);
  } catch (err) {
    throw invalid(
      file,
      line,
      `its front matter is not valid YAML: ${(err as Error).message.split('\n')[0]}`,
    );
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw invalid(file, line, 'its front matter must be a mapping of fields');
  return value as Record<string, unknown>;
}

function invalid(file: string, line: number, why: string): DirigentError {
  return DirigentError.fatal(ErrorCode.INVALID_ITEM, `Knowledge ${file}: ${why}.`, {
    location: { file, line, column: 1 },
    hint: 'Start the file with front matter such as:\n---\nname: my-entry\ndescription: What it says\nversion: "1.0.0"\n---',
  });
}

function lineCount(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}
