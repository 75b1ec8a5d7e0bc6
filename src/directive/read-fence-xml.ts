/**
 * Reads the XML of a directive's fence in one pass with saxes, a conforming streaming parser that
 * knows where each tag starts: checking well-formedness, building the tree and placing every
 * element happen together, with no second validation pass and no rewriting of the text.
 *
 * This path only ever accepts: whatever saxes rejects, and whatever Dirigent's XML reader treats
 * in its own way (a document type declaration, a processing instruction or XML declaration,
 * CDATA, nesting deeper than {@link MAX_XML_DEPTH}), makes it give up, and the validating reader
 * in `read-validated-xml.ts` reads the fragment again and reports the error as it always has, with the same
 * message, line and column. So the errors of the catalogue do not depend on saxes's wording.
 */
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import type { SourceLocation } from '../errors/source-location.js';
import { decodeEntities } from './xml-entities.js';
import type { LineIndex } from './line-index.js';
import { attributeOffsets } from './attribute-offsets.js';
import { unmask } from './mask-opaque.js';
import type { XmlChild, XmlElement } from './xml-element.js';
import { MAX_XML_DEPTH } from './xml-shape.js';

/** Thrown inside a handler to stop saxes at the first thing this path does not take. */
const GIVE_UP: unique symbol = Symbol('give up');

/** What one read builds: the elements open at the moment, and the text it reads. */
interface ReadState {
  text: string;
  base: number;
  lines: LineIndex;
  top: XmlChild[];
  open: XmlElement[];
}

let state: ReadState | undefined;
/** The options this path reads with: positions, no namespaces (attributes are a plain record). */
type Options = { xmlns: false; position: true };

let parser: SaxesParser<Options> | undefined;

/**
 * The nodes of `text` (a fence whose opaque elements are masked, starting at offset `base` of the
 * file), each element placed at its `<`; or undefined when the validating reader must read it
 * (see the module comment). Top-level text (white space around the root) is dropped.
 */
export function readFenceXml(text: string, base: number, lines: LineIndex): XmlChild[] | undefined {
  // saxes reads a lone surrogate together with the character after it; such text is left alone.
  if (!isWellFormed(text)) return undefined;
  const p = parser ?? newParser();
  parser = undefined; // a parser stopped half-way is not used again
  const read: ReadState = { text, base, lines, top: [], open: [] };
  state = read;
  try {
    p.write(text).close();
  } catch (err) {
    if (err === GIVE_UP) return undefined;
    throw err;
  } finally {
    state = undefined;
  }
  parser = p;
  return read.top;
}

function newParser(): SaxesParser<Options> {
  const p = new SaxesParser<Options>({ xmlns: false, position: true });
  const giveUp = (): never => {
    throw GIVE_UP;
  };
  p.on('error', giveUp);
  p.on('doctype', giveUp);
  p.on('processinginstruction', giveUp);
  p.on('xmldecl', giveUp);
  p.on('cdata', giveUp);
  p.on('opentag', (tag) => opened(p, tag));
  p.on('closetag', () => state!.open.pop());
  p.on('text', (text) => {
    const s = state!;
    const kids = s.open[s.open.length - 1]?.children;
    if (kids === undefined) return;
    // Text on both sides of a comment is one run, as the validating reader has it.
    const last = kids.length - 1;
    if (typeof kids[last] === 'string') kids[last] += unmask(text);
    else kids.push(unmask(text));
  });
  return p;
}

function opened(p: SaxesParser<Options>, tag: SaxesTagPlain): void {
  const s = state!;
  if (s.open.length >= MAX_XML_DEPTH || !isBmpName(tag.name)) throw GIVE_UP;
  // saxes stands just after the tag's `>`; no `<` can occur inside a well-formed start tag.
  const start = s.text.lastIndexOf('<', p.position - 1);
  const loc = s.lines.at(s.base + start);
  const el: XmlElement = {
    tag: tag.name,
    attrs: attributesOf(tag, s.text, start, p.position, loc),
    children: [],
    loc,
    attrAt: (name) => attributeAt(s.text, s.base, s.lines, start, el, name),
  };
  const parent = s.open[s.open.length - 1];
  (parent === undefined ? s.top : parent.children).push(el);
  s.open.push(el); // saxes reports the end of a self-closing tag too
}

/**
 * The attributes as written. saxes turns tabs and line breaks inside a value into spaces, as XML
 * asks; Dirigent keeps them (a JSONata expression may span lines), so a start tag that holds any
 * has its values read again from the text.
 */
function attributesOf(
  tag: SaxesTagPlain,
  text: string,
  start: number,
  end: number,
  loc: SourceLocation,
): Record<string, string> {
  const attrs = tag.attributes;
  for (const name in attrs) if (!isBmpName(name)) throw GIVE_UP;
  if (!hasLineBreakOrTab(text, start, end)) {
    for (const name in attrs) attrs[name] = unmask(attrs[name]!);
    return attrs;
  }
  const offsets = attributeOffsets(text, start);
  for (const name in attrs) {
    const at = offsets[name]!;
    const open = text.indexOf('=', at) + 1;
    let q = open;
    while (text[q] !== '"' && text[q] !== "'") q++;
    const raw = text.slice(q + 1, text.indexOf(text[q]!, q + 1)).replace(/\r\n?/g, '\n');
    attrs[name] = unmask(decodeEntities(raw, loc));
  }
  return attrs;
}

/** Whether `text` holds no lone surrogate (`String.prototype.isWellFormed`, ES2024, in Node 20). */
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

/**
 * Whether `name` stays within the Basic Multilingual Plane. XML allows names with characters
 * beyond it (U+10000 and up); the validating reader does not, and this path takes no name that
 * reader would refuse.
 */
function isBmpName(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) return false;
  }
  return true;
}

function hasLineBreakOrTab(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 13 || c === 9) return true;
  }
  return false;
}

/** Where attribute `name` of `el` (whose `<` is at `start` of `text`) is written. */
function attributeAt(
  text: string,
  base: number,
  lines: LineIndex,
  start: number,
  el: XmlElement,
  name: string,
): SourceLocation | undefined {
  if (!Object.hasOwn(el.attrs, name)) return undefined;
  const at = attributeOffsets(text, start)[name];
  return at === undefined ? undefined : lines.at(base + at);
}
