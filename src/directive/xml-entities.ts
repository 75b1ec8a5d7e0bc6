/**
 * Entity references of XML text and attribute values: the five XML predefines (`&lt;`, `&gt;`,
 * `&amp;`, `&quot;`, `&apos;`) and character references (`&#65;`, `&#x41;`, `&#10;`). An unknown
 * named reference (`&nbsp;`, HTML's) stays as it is written; a reference to a character XML does
 * not allow (`&#0;`, a surrogate) is an `XML_SYNTAX` error.
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const REFERENCE = /&(?:#(\d{1,8})|#x([0-9A-Fa-f]{1,8})|(lt|gt|amp|quot|apos));/g;

/** `text` with its references decoded; `loc` (the element) places an error. */
export function decodeEntities(text: string, loc: SourceLocation | undefined): string {
  if (!text.includes('&')) return text;
  return text.replace(REFERENCE, (ref, dec: string | undefined, hex: string | undefined, name) => {
    if (name !== undefined) return PREDEFINED[name as string]!;
    const code = dec !== undefined ? Number.parseInt(dec, 10) : Number.parseInt(hex!, 16);
    if (!isXmlChar(code)) {
      throw DirigentError.fatal(
        ErrorCode.XML_SYNTAX,
        `${ref} refers to a character XML does not allow (U+${code.toString(16).toUpperCase().padStart(4, '0')}).`,
        {
          ...(loc && { location: loc }),
          hint: 'Character references must name a tab, a line break or a printable character, e.g. &#10; for a newline.',
        },
      );
    }
    return String.fromCodePoint(code);
  });
}

/** Whether `code` is one of XML 1.0's `Char`s. */
export function isXmlChar(code: number): boolean {
  return (
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
  );
}
