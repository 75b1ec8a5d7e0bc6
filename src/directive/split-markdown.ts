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
  const signature =
    rows[0] !== undefined && SIGNATURE.test(rows[0].trim()) ? rows[0].trim() : undefined;
  const first = signature === undefined ? 0 : 1;
  let outer = 0;
  let open = -1;
  for (let i = first; i < rows.length; i++) {
    if (!rows[i]!.startsWith('```')) continue; // most rows are prose: no trimming, no pattern
    const row = rows[i]!.trimEnd();
    if (/^````+/.test(row)) outer = outer === 0 ? 1 : 0;
    else if (outer === 0 && row === '```xml') {
      open = i;
      break;
    }
  }
  if (open === -1) throw noFence(rows, starts, first, lines);
  let close = -1;
  for (let i = open + 1; i < rows.length; i++) {
    if (rows[i]!.startsWith('```') && rows[i]!.trimEnd() === '```') {
      close = i;
      break;
    }
  }
  if (close === -1) {
    throw DirigentError.fatal(
      ErrorCode.UNCLOSED_FENCE,
      `The \`\`\`xml code block opened at line ${open + 1} is never closed.`,
      {
        location: lines.at(starts[open]!),
        hint: 'End the XML with a line that holds only ``` (after </directive>).',
      },
    );
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

const FENCE_HINT =
  'Add a line "```xml", then <directive name="…" version="1.0.0">…</directive>, then a line "```".';

/** `NO_XML_FENCE`, pointing at a near miss (```` ``` xml ````, ```` ```XML ````, a bare `<directive>`) when there is one. */
function noFence(rows: string[], starts: number[], first: number, lines: LineIndex): DirigentError {
  for (let i = first; i < rows.length; i++) {
    const row = rows[i]!.trimEnd();
    if (rows[i]!.trimEnd() === '```xml') {
      return DirigentError.fatal(
        ErrorCode.NO_XML_FENCE,
        `No \`\`\`xml code block found outside an example: the one at line ${i + 1} is inside a \`\`\`\` block, which only shows it.`,
        {
          location: lines.at(starts[i]!),
          hint: "Put the directive's own ```xml block outside any ```` block.",
        },
      );
    }
    if (/^\s*(```|~~~)\s*xml\b/i.test(row)) {
      return DirigentError.fatal(
        ErrorCode.NO_XML_FENCE,
        `No \`\`\`xml code block found: line ${i + 1} opens a block with "${row}", but the opening line must be exactly \`\`\`xml.`,
        {
          location: lines.at(starts[i]!),
          hint: 'Write the line as ```xml: three backticks and "xml" in lower case, at the start of the line, nothing after it.',
        },
      );
    }
  }
  for (let i = first; i < rows.length; i++) {
    const column = rows[i]!.indexOf('<directive');
    if (column !== -1) {
      return DirigentError.fatal(
        ErrorCode.NO_XML_FENCE,
        `No \`\`\`xml code block found: the <directive> element at line ${i + 1} must stand inside one.`,
        {
          location: lines.at(starts[i]! + column),
          hint: 'Put a line "```xml" before <directive …> and a line "```" after </directive>.',
        },
      );
    }
  }
  return DirigentError.fatal(
    ErrorCode.NO_XML_FENCE,
    'No ```xml code block found: a directive keeps its <directive> element inside one.',
    {
      location: lines.at(starts[first] ?? 0),
      hint: FENCE_HINT,
    },
  );
}
