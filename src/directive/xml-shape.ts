/**
 * Refuses XML that would cost more to read than it is worth, before any parser sees it: a document
 * type declaration (the door to entity expansion; directives have no use for one), and elements
 * nested deeper than {@link MAX_XML_DEPTH}. One pass over the text, no recursion.
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { LineIndex } from './line-index.js';
import { xmlTooDeep } from '../errors/directive-errors.js';

/** How deep elements may nest in a directive (its deepest real ones are about 10 levels). */
export const MAX_XML_DEPTH = 64;

/**
 * Throws `XML_SYNTAX` for a `<!DOCTYPE` or `<!ENTITY`, and `XML_TOO_DEEP` at the first element
 * nested deeper than {@link MAX_XML_DEPTH}; `base` is the offset of `text` in the file.
 */
export function checkXmlShape(text: string, base: number, lines: LineIndex): void {
  let depth = 0;
  const n = text.length;
  for (let i = text.indexOf('<'); i !== -1 && i < n; i = text.indexOf('<', i + 1)) {
    const next = text.charCodeAt(i + 1);
    if (next === 33 /* ! */) {
      if (text.startsWith('<!--', i)) i = skipTo(text, '-->', i);
      else if (text.startsWith('<![CDATA[', i)) i = skipTo(text, ']]>', i);
      else if (/^<!(DOCTYPE|ENTITY)/i.test(text.slice(i, i + 9))) {
        throw DirigentError.fatal(
          ErrorCode.XML_SYNTAX,
          'A document type declaration (<!DOCTYPE …> or <!ENTITY …>) is not allowed in a directive.',
          {
            location: lines.at(base + i),
            hint: 'Remove it; write special characters as &lt; &gt; &amp; &quot; &apos; or &#NNN;.',
          },
        );
      }
    } else if (next === 63 /* ? */) {
      i = skipTo(text, '?>', i);
    } else if (next === 47 /* / */) {
      depth = Math.max(0, depth - 1);
    } else if (isNameStart(next)) {
      const end = tagEnd(text, i);
      if (text.charCodeAt(end - 1) !== 47) {
        depth++;
        if (depth > MAX_XML_DEPTH) {
          throw xmlTooDeep(
            `Elements are nested more than ${MAX_XML_DEPTH} levels deep here`,
            lines.at(base + i),
          );
        }
      }
      i = end;
    }
    if (i === -1) return;
  }
}

/** The index of the end of `close` after `from` (or -1 when it never comes). */
function skipTo(text: string, close: string, from: number): number {
  const at = text.indexOf(close, from + 2);
  return at === -1 ? -1 : at + close.length - 1;
}

/** The index of the `>` ending the start tag at `i`, past quoted attribute values. */
function tagEnd(text: string, i: number): number {
  let quote = 0;
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (quote !== 0) {
      if (c === quote) quote = 0;
    } else if (c === 34 || c === 39) quote = c;
    else if (c === 62) return j;
    else if (c === 60) return j - 1;
  }
  return text.length;
}

function isNameStart(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95 || code > 127;
}
