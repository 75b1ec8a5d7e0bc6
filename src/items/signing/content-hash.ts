/**
 * What a RYE signature covers (reference §5.2), per item kind. Pure: no I/O.
 *
 * Dirigent keeps ONE scheme, RYE's, for both verifying and signing, so that every file RYE signed
 * verifies in Dirigent and every file Dirigent signs verifies in RYE. For directives that scheme
 * covers only the `<directive>` element: in RYE's modern layout the `<process>` steps follow the
 * XML fence and are not covered. Rather than invent a second, incompatible scheme (whole file
 * minus line 1) that RYE could not check and that would make "is this signed?" depend on who
 * signed it, Dirigent reports the gap: {@link SignedContent.coversWholeFile} is `false` and the
 * verification carries a warning, so a policy can refuse such files or ask for the legacy layout
 * (process inside the fence), which the signature does cover. `dirigent sign` leaves no such gap
 * in what it signs: such an item gets a `ryeos:signed` line (RYE's current format, which hashes
 * every byte after the line; `SignOptions.wholeFile`).
 */
import { createHash } from 'node:crypto';
import { extname } from 'node:path';
import type { ItemKind } from '../item-kind.js';
import {
  readSignatureLine,
  removeSignatureLine,
  signatureSlot,
  signatureStyleFor,
} from './signature-line.js';

/** The hash a signature line must carry for a file, and how much of the file it protects. */
export interface SignedContent {
  /** SHA-256 of the covered text (UTF-8), 64 lowercase hex characters. */
  hash: string;
  /**
   * Whether everything Dirigent reads as content is covered. The signature line, and for
   * directives the Markdown title/preamble and the fence markers, never are; `false` means
   * something more is left out: a directive's text after the XML fence (its `<process>` steps in
   * RYE's modern layout), or a knowledge entry's `---` front matter.
   */
  coversWholeFile: boolean;
  /** What is not covered, in words, when {@link coversWholeFile} is `false`. */
  uncovered?: string;
}

/**
 * The text as Python's text mode reads it (CRLF and lone CR become LF), which is what RYE hashes:
 * a checkout with CRLF line endings still verifies.
 */
export function normalizeLineEndings(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

/** SHA-256 of a text's UTF-8 bytes, hex. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

// Python's str.strip() with no argument: the characters for which str.isspace() is true. JS's
// trim() differs (it strips U+FEFF and keeps U+001C–U+001F and U+0085).
const PY_SPACE =
  '[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const PY_STRIP = new RegExp(`^${PY_SPACE}+|${PY_SPACE}+$`, 'g');

function pythonStrip(text: string): string {
  return text.replace(PY_STRIP, '');
}

/**
 * The hash a file's signature must carry (reference §5.2):
 *
 * - **directive** (`.md`): the text from the first `<directive…>` tag to the last `</directive>`,
 *   stripped (RYE's scheme; see the module comment for why Dirigent keeps it). A directive with
 *   no `<directive>` element (Dirigent's front-matter format, which RYE cannot sign) is hashed
 *   like a tool.
 * - **knowledge** (`.md`): the file without its signature line; when that starts with `---`,
 *   only what follows the next `---`, stripped.
 * - **tool**, and any other file: the file without a leading `#!/` shebang line and without the
 *   signature line, byte for byte including the final newline.
 * - any file whose signature slot holds a **`ryeos:signed:`** line (RYE's current tooling), of
 *   any kind: everything after that line, byte for byte (a shebang before it is not covered).
 *   RYE hashes the bytes as they are; see {@link ryeosContentHash} for a file with CRLF endings.
 *
 * @param text the file's text (line endings are normalised here).
 * @param file the file's path; its extension selects the signature style.
 */
export function signedContentHash(text: string, kind: ItemKind, file: string): SignedContent {
  const normal = normalizeLineEndings(text);
  const style = signatureStyleFor(file);
  const line = readSignatureLine(normal, style);
  if (line?.kind === 'signed' && line.scheme === 'ryeos') {
    return { hash: ryeosContentHash(normal, file), coversWholeFile: true };
  }
  const markdown = extname(file).toLowerCase() === '.md';
  if (kind === 'directive' && markdown) {
    const directive = directiveSpan(normal);
    if (directive !== undefined) return directive;
  }
  const rest = removeSignatureLine(normal, style);
  if (kind === 'knowledge' && markdown) return knowledgeContent(rest);
  return { hash: sha256Hex(rest.replace(/^#!\/[^\n]*\n/, '')), coversWholeFile: true };
}

/**
 * The hash of a `ryeos:signed` file as RYE computes it: SHA-256 of everything after the signature
 * slot's line, with `text`'s line endings as they are (RYE reads bytes; pass the raw text to
 * check a file RYE signed with CRLF endings, the normalised one for a CRLF checkout of a file
 * signed with LF endings).
 */
export function ryeosContentHash(text: string, file: string): string {
  return sha256Hex(text.slice(signatureSlot(text, signatureStyleFor(file)).end));
}

function directiveSpan(text: string): SignedContent | undefined {
  const open = /<directive[^>]*>/.exec(text);
  if (!open) return undefined;
  const closeTag = '</directive>';
  const close = text.lastIndexOf(closeTag);
  if (close === -1 || close < open.index) return undefined;
  const end = close + closeTag.length;
  const hash = sha256Hex(pythonStrip(text.slice(open.index, end)));
  // After the element: the fence's closing line, then (modern layout) the process steps.
  const after = text.slice(end).replace(/^[ \t]*\n?[ \t]*```[ \t]*(\n|$)/, '');
  if (after.trim() === '') return { hash, coversWholeFile: true };
  const lines = after.trimEnd().split('\n').length;
  const what = /<process[\s>]/.test(after) ? 'the <process> steps' : 'text';
  return {
    hash,
    coversWholeFile: false,
    uncovered: `the ${lines} line${lines === 1 ? '' : 's'} after the XML fence (${what})`,
  };
}

function knowledgeContent(rest: string): SignedContent {
  if (!rest.startsWith('---')) return { hash: sha256Hex(rest), coversWholeFile: true };
  const close = rest.indexOf('---', 3);
  if (close === -1) return { hash: sha256Hex(rest), coversWholeFile: true };
  return {
    hash: sha256Hex(pythonStrip(rest.slice(close + 3))),
    coversWholeFile: false,
    uncovered: 'the --- front matter',
  };
}
