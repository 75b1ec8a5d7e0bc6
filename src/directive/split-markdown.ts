import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { LineIndex } from './line-index.js';

/** The parts of a directive file (RYE's layout). Offsets are into the whole file. */
export interface MarkdownParts {
  signature: string | undefined;
  preamble: string;
  title: string | undefined;
  /** The XML between the fence lines. */
  xml: string;
  xmlOffset: number;
  /** Everything after the closing fence. */
  body: string;
  bodyOffset: number;
}

const SIGNATURE = /^<!--\s*(?:rye|kiwi-mcp):(?:signed|validated):.*-->\s*$/;

/**
 * Splits a directive file into signature line, preamble, the first ```` ```xml ```` fence (not
 * inside an outer 4+-backtick fence) and the body after it.
 */
export function splitMarkdown(text: string, lines: LineIndex): MarkdownParts {
  const rows = text.split('\n');
  const starts: number[] = [];
  let offset = 0;
  for (const row of rows) {
    starts.push(offset);
    offset += row.length + 1;
  }
  const signature = rows[0] !== undefined && SIGNATURE.test(rows[0].trim()) ? rows[0].trim() : undefined;
  const first = signature === undefined ? 0 : 1;
  let outer = 0;
  let open = -1;
  for (let i = first; i < rows.length; i++) {
    const row = rows[i]!.trimEnd();
    if (/^````+/.test(row)) outer = outer === 0 ? 1 : 0;
    else if (outer === 0 && row === '```xml') {
      open = i;
      break;
    }
  }
  if (open === -1) {
    throw DirigentError.fatal(ErrorCode.NO_XML_FENCE, 'No ```xml code block found: a directive keeps its <directive> element inside one.', {
      location: lines.at(starts[first] ?? 0),
      hint: 'Add a line "```xml", then <directive name="…" version="1.0.0">…</directive>, then a line "```".',
    });
  }
  let close = -1;
  for (let i = open + 1; i < rows.length; i++) {
    if (rows[i]!.trimEnd() === '```') {
      close = i;
      break;
    }
  }
  if (close === -1) {
    throw DirigentError.fatal(ErrorCode.UNCLOSED_FENCE, 'The ```xml code block is never closed.', {
      location: lines.at(starts[open]!),
      hint: 'End the XML with a line that holds only ```.',
    });
  }
  const preambleRows = rows.slice(first, open);
  const titleRow = preambleRows.find((r) => /^#\s+/.test(r));
  const xmlOffset = starts[open + 1]!;
  const bodyOffset = starts[close + 1] ?? text.length;
  return {
    signature,
    preamble: preambleRows.join('\n').trim(),
    title: titleRow?.replace(/^#\s+/, '').trim(),
    xml: text.slice(xmlOffset, starts[close]!),
    xmlOffset,
    body: text.slice(bodyOffset),
    bodyOffset,
  };
}
