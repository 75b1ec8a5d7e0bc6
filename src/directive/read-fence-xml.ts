/**
 * Reads the XML of a directive's fence in one pass: checking that it is well-formed, building the
 * tree and placing every element happen together, with no second validation pass and no
 * rewriting of the text.
 *
 * It reads the plain XML directives are written in, and nothing more: elements with ASCII names,
 * attributes with quoted values, text, comments, the five predefined entities and character
 * references. Whatever falls outside (a syntax error of any kind, a document type declaration,
 * CDATA, a processing instruction, a name with other characters, an unknown entity, nesting deeper
 * than {@link MAX_XML_DEPTH}, a character XML does not allow) makes it give up, and the validating
 * reader (`read-validated-xml.ts`, fast-xml-parser) reads the fragment again and reports the error
 * as it always has, with the same message, line and column. So this reader takes a subset of what
 * both XML and fast-xml-parser take, builds the very tree the validating reader builds from it
 * (checked against it on real and mutated directives by `read-fence-xml.test.ts`), and never has
 * an error message of its own.
 */
import type { SourceLocation } from '../errors/source-location.js';
import type { LineIndex } from './line-index.js';
import { hasMasked, unmask } from './mask-opaque.js';
import type { XmlChild, XmlElement } from './xml-element.js';
import { decodeEntities, isXmlChar } from './xml-entities.js';
import { MAX_XML_DEPTH } from './xml-shape.js';

/** Characters XML does not allow in a document (lone surrogates are checked apart). */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;
/** The references read here: those `decodeEntities` decodes. */
const REFERENCE = /&(?:lt|gt|amp|quot|apos|#([0-9]{1,8})|#x([0-9A-Fa-f]{1,8}));/y;

/** The fence being read. */
interface Fence {
  text: string;
  base: number;
  lines: LineIndex;
  /** Whether the text holds a carriage return (most fences hold none). */
  cr: boolean;
  /** Whether the text holds masked characters (most fences hold none). */
  masked: boolean;
}

/**
 * The nodes of `text` (a fence whose opaque elements are masked, starting at offset `base` of the
 * file), each element placed at its `<`; or undefined when the validating reader must read it
 * (see the module comment). Text around the root element is dropped.
 */
export function readFenceXml(text: string, base: number, lines: LineIndex): XmlChild[] | undefined {
  if (NOT_XML_CHAR.test(text) || !isWellFormed(text) || text.charCodeAt(0) === 0xfeff)
    return undefined;
  const f: Fence = { text, base, lines, cr: text.includes('\r'), masked: hasMasked(text) };
  const top: XmlElement[] = [];
  const open: XmlElement[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const lt = text.indexOf('<', i);
    const end = lt === -1 ? n : lt;
    if (end > i) {
      const parent = open[open.length - 1];
      if (parent === undefined) {
        if (!isSpaceOnly(text, i, end)) return undefined;
      } else {
        const run = textRun(f, i, end);
        if (run === undefined) return undefined;
        // Text on both sides of a comment is one run, as the validating reader has it.
        const kids = parent.children;
        if (typeof kids[kids.length - 1] === 'string') kids[kids.length - 1] += run;
        else kids.push(run);
      }
    }
    if (lt === -1) break;
    const next = text.charCodeAt(lt + 1);
    if (next === 33 /* ! */) i = commentEnd(text, lt);
    else if (next === 47 /* / */) {
      const el = open.pop();
      i = el === undefined ? -1 : endTagEnd(text, lt, el.tag);
      if (open.length === 0 && i !== -1)
        return i === n || isSpaceOnlyOrComments(text, i) ? top : undefined;
    } else {
      if (open.length >= MAX_XML_DEPTH || (open.length === 0 && top.length > 0)) return undefined;
      const el = startTag(f, lt);
      if (el === undefined) return undefined;
      const parent = open[open.length - 1];
      (parent === undefined ? top : parent.children).push(el);
      if (!selfClosing) open.push(el);
      else if (parent === undefined) return isSpaceOnlyOrComments(text, tagEnd) ? top : undefined;
      i = tagEnd;
    }
    if (i === -1) return undefined;
  }
  return undefined; // no root element, or one never closed
}

/** An element read from a fence: it finds where its attributes are written when asked. */
class FenceElement implements XmlElement {
  readonly children: XmlChild[] = [];

  constructor(
    readonly tag: string,
    readonly attrs: Record<string, string>,
    readonly loc: SourceLocation,
    private readonly fence: Fence,
    /** Where each attribute's name is in the fence, in the order of `attrs`. */
    private readonly offsets: readonly number[],
  ) {}

  attrAt(name: string): SourceLocation | undefined {
    // XML names never look like integers, so `attrs` keeps its keys in the order they were read.
    const at = this.offsets[Object.keys(this.attrs).indexOf(name)];
    return at === undefined ? undefined : this.fence.lines.at(this.fence.base + at);
  }
}

/** Where the start tag last read by {@link startTag} ends, and whether it closes itself. */
let tagEnd = 0;
let selfClosing = false;

/**
 * Reads the start tag at `lt`: the element, or undefined. Sets {@link tagEnd} and
 * {@link selfClosing} (module state rather than a result object per element).
 */
function startTag(f: Fence, lt: number): XmlElement | undefined {
  const text = f.text;
  let j = lt + 1;
  if (!isNameStart(text.charCodeAt(j))) return undefined;
  while (isNameChar(text.charCodeAt(++j)));
  const tag = text.slice(lt + 1, j);
  const loc = f.lines.at(f.base + lt);
  const attrs: Record<string, string> = {};
  const offsets: number[] = [];
  for (;;) {
    const spaced = j;
    while (isXmlSpace(text.charCodeAt(j))) j++;
    const c = text.charCodeAt(j);
    if (c === 62 /* > */ || (c === 47 /* / */ && text.charCodeAt(j + 1) === 62)) {
      tagEnd = c === 62 ? j + 1 : j + 2;
      selfClosing = c === 47;
      return new FenceElement(tag, attrs, loc, f, offsets);
    }
    // Attributes are separated by white space: `a="1"b="2"` is not XML.
    if (j === spaced || !isNameStart(c)) return undefined;
    const nameStart = j;
    while (isNameChar(text.charCodeAt(++j)));
    const name = text.slice(nameStart, j);
    while (isXmlSpace(text.charCodeAt(j))) j++;
    if (text.charCodeAt(j) !== 61 /* = */) return undefined;
    while (isXmlSpace(text.charCodeAt(++j)));
    const quote = text.charCodeAt(j);
    if (quote !== 34 && quote !== 39) return undefined;
    const close = text.indexOf(quote === 34 ? '"' : "'", j + 1);
    if (close === -1 || Object.hasOwn(attrs, name) || name === '__proto__') return undefined;
    const value = attributeValue(f, j + 1, close, loc);
    if (value === undefined) return undefined;
    attrs[name] = value;
    offsets.push(nameStart);
    j = close + 1;
  }
}

/** The offset after the end tag at `lt` if it closes `tag`, else -1. */
function endTagEnd(text: string, lt: number, tag: string): number {
  if (!text.startsWith(tag, lt + 2)) return -1;
  let j = lt + 2 + tag.length;
  while (isXmlSpace(text.charCodeAt(j))) j++;
  return text.charCodeAt(j) === 62 ? j + 1 : -1;
}

/**
 * The offset after the comment at `lt`, or -1 for anything else after `<!`, or a comment XML
 * refuses (one holding `--`, or starting with `-` or `>`).
 */
function commentEnd(text: string, lt: number): number {
  if (!text.startsWith('<!--', lt)) return -1;
  const first = text.charCodeAt(lt + 4);
  if (first === 45 || first === 62) return -1;
  const dashes = text.indexOf('--', lt + 4);
  return dashes !== -1 && text.charCodeAt(dashes + 2) === 62 ? dashes + 3 : -1;
}

/** Whether `text` from `from` on holds only white space and comments. */
function isSpaceOnlyOrComments(text: string, from: number): boolean {
  for (let i = from; i < text.length; ) {
    const lt = text.indexOf('<', i);
    if (!isSpaceOnly(text, i, lt === -1 ? text.length : lt)) return false;
    if (lt === -1) return true;
    i = commentEnd(text, lt);
    if (i === -1) return false;
  }
  return true;
}

/** The text between `start` and `end` as the validating reader has it, or undefined. */
function textRun(f: Fence, start: number, end: number): string | undefined {
  const raw = f.text.slice(start, end);
  if (raw.includes(']]>')) return undefined;
  return decoded(f, raw);
}

/** An attribute value as the validating reader has it (no `<` allowed), or undefined. */
function attributeValue(
  f: Fence,
  start: number,
  end: number,
  loc: SourceLocation,
): string | undefined {
  const raw = f.text.slice(start, end);
  if (raw.includes('<')) return undefined;
  return decoded(f, raw, loc);
}

/** `raw` with line breaks as LF, references decoded and masking undone; undefined for a bad `&`. */
function decoded(f: Fence, raw: string, loc?: SourceLocation): string | undefined {
  let out = f.cr && raw.includes('\r') ? raw.replace(/\r\n?/g, '\n') : raw;
  if (out.includes('&')) {
    if (!referencesDecode(out)) return undefined;
    out = decodeEntities(out, loc);
  }
  return f.masked ? unmask(out) : out;
}

/** Whether every `&` of `text` starts a reference `decodeEntities` decodes to an XML character. */
function referencesDecode(text: string): boolean {
  for (let at = text.indexOf('&'); at !== -1; at = text.indexOf('&', at + 1)) {
    REFERENCE.lastIndex = at;
    const m = REFERENCE.exec(text);
    if (m === null) return false;
    const code = m[1] !== undefined ? Number(m[1]) : m[2] !== undefined ? parseInt(m[2], 16) : 32;
    if (!isXmlChar(code)) return false;
  }
  return true;
}

/** Whether `text` holds no lone surrogate (`String.prototype.isWellFormed`, ES2024, in Node 20). */
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

function isSpaceOnly(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (!isXmlSpace(text.charCodeAt(i))) return false;
  return true;
}

/** XML's white space: space, tab, line feed, carriage return. */
function isXmlSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13;
}

/** A letter or `_` (names with other characters are left to the validating reader). */
function isNameStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}

/** A letter, digit, `_`, `-`, `.` or `:`. */
function isNameChar(c: number): boolean {
  return isNameStart(c) || (c >= 48 && c <= 58) || c === 45 || c === 46;
}
