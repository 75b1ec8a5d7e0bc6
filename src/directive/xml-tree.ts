/**
 * Turns an XML fragment into a small tree whose elements remember where they start in the file.
 *
 * fast-xml-parser reports no positions, so before parsing, every start tag gets an extra
 * attribute holding its original offset. All other rewriting is length-preserving (a `<` or `&`
 * that must stay text becomes a private-use character and is restored afterwards), so the
 * validator's line and column numbers stay those of the original file.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';
import { LineIndex } from './line-index.js';

/** An element with its attributes, children (elements and text) and location. */
export interface XmlElement {
  tag: string;
  attrs: Record<string, string>;
  children: XmlChild[];
  /** Where the element's `<` is. */
  loc: SourceLocation;
  /** Where each attribute's name is, so that errors about one attribute point at it. */
  attrLocs?: Record<string, SourceLocation>;
}
/** A child of an element: another element or a run of text. */
export type XmlChild = XmlElement | string;

/** A repair made to text that was not well-formed XML (lenient mode only). */
export interface XmlRepair {
  loc: SourceLocation;
  message: string;
}

const LT = '\uE000';
const AMP = '\uE001';
const POS_ATTR = '__at';
const OPAQUE_TAGS = ['template', 'example', 'raw'];
const MAX_REPAIRS = 500;
const WRAP_OPEN = '<dirigent-body>';
const WRAP_CLOSE = '</dirigent-body>';

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  allowBooleanAttributes: false,
});

/**
 * Parses `text` (a slice of the file starting at `baseOffset`). Strict mode throws
 * `XML_SYNTAX` at the first error; lenient mode (RYE's prose after the fence) keeps stray `<`
 * and `&` as text and reports each repair.
 */
export function parseXmlFragment(
  fragment: string,
  fragmentOffset: number,
  lines: LineIndex,
  lenient: boolean,
): { nodes: XmlChild[]; repairs: XmlRepair[] } {
  // Prose after the fence holds several elements and text: one wrapper makes it a document.
  // Offsets below are in the wrapped text, so the file offset is `baseOffset + local`.
  const text = lenient ? WRAP_OPEN + fragment + WRAP_CLOSE : fragment;
  const baseOffset = lenient ? fragmentOffset - WRAP_OPEN.length : fragmentOffset;
  const chars = maskOpaque(text).split('');
  const repairs: XmlRepair[] = [];
  if (lenient) escapeBareChars(chars, baseOffset, lines, repairs);
  for (let round = 0; ; round++) {
    const result = XMLValidator.validate(chars.join(''), { allowBooleanAttributes: false });
    if (result === true) break;
    const local = new LineIndex('', chars.join(''));
    const errOffset = local.offsetOf(result.err.line, result.err.col);
    if (!lenient || round >= MAX_REPAIRS)
      throw syntaxError(result.err.msg, errOffset, chars.join(''), baseOffset, lines, local);
    const at = repairOffset(chars, result.err.msg, errOffset, local);
    if (at === undefined || chars[at] !== '<')
      throw syntaxError(result.err.msg, errOffset, chars.join(''), baseOffset, lines, local);
    chars[at] = LT;
    repairs.push({
      loc: lines.at(baseOffset + at),
      message: `Text is not well-formed XML (${result.err.msg}); "<" kept as text.`,
    });
  }
  const masked = chars.join('');
  const withPositions = injectPositions(masked, baseOffset);
  const src: Source = { text: masked, base: baseOffset, lines };
  const nodes = (parser.parse(withPositions) as RawNode[]).map((n) => convert(n, src));
  const wrapper = nodes[0];
  return {
    nodes:
      lenient && wrapper !== undefined && typeof wrapper !== 'string' ? wrapper.children : nodes,
    repairs,
  };
}

type RawNode = Record<string, unknown>;

/** The fragment being converted: its (masked, same-length) text and where it starts in the file. */
interface Source {
  text: string;
  base: number;
  lines: LineIndex;
}

function convert(node: RawNode, src: Source): XmlChild {
  if ('#text' in node) return restore(String(node['#text']));
  const attrs: Record<string, string> = {};
  let offset = 0;
  let tag = '';
  let kids: RawNode[] = [];
  for (const key of Object.keys(node)) {
    if (key === ':@') {
      for (const [name, value] of Object.entries(node[key] as Record<string, unknown>)) {
        if (name === POS_ATTR) offset = Number(value);
        else attrs[name] = restore(String(value));
      }
    } else {
      tag = key;
      kids = node[key] as RawNode[];
    }
  }
  const attrLocs: Record<string, SourceLocation> = {};
  for (const [name, at] of Object.entries(attributeOffsets(src.text, offset - src.base))) {
    if (name in attrs) attrLocs[name] = src.lines.at(Math.max(0, src.base + at));
  }
  return {
    tag,
    attrs,
    children: kids.map((k) => convert(k, src)),
    loc: src.lines.at(Math.max(0, offset)),
    attrLocs,
  };
}

/**
 * The offset of each attribute name in the start tag that begins at `start` (a `<`). The text has
 * passed validation, so the tag is well-formed: names, `=`, and quoted values.
 */
function attributeOffsets(text: string, start: number): Record<string, number> {
  const out: Record<string, number> = {};
  if (text[start] !== '<') return out;
  let i = start + 1;
  while (i < text.length && !/[\s/>]/.test(text[i]!)) i++;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    const c = text[i];
    if (c === undefined || c === '>' || c === '/') break;
    const nameStart = i;
    while (i < text.length && !/[\s=/>]/.test(text[i]!)) i++;
    const name = text.slice(nameStart, i);
    if (name === '') break;
    if (!(name in out)) out[name] = nameStart;
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (text[i] !== '=') continue;
    i++;
    while (i < text.length && /\s/.test(text[i]!)) i++;
    const quote = text[i];
    if (quote === '"' || quote === "'") {
      const end = text.indexOf(quote, i + 1);
      i = end === -1 ? text.length : end + 1;
    } else {
      while (i < text.length && !/[\s>]/.test(text[i]!)) i++;
    }
  }
  return out;
}

const SYNTAX_HINT =
  'Close every element you open, quote attribute values, and write < and & in text as &lt; and &amp;.';

/**
 * An `XML_SYNTAX` error for a message of fast-xml-parser's validator, reworded to say what is
 * wrong and how to fix it, with every line and column counted in the whole file (the validator
 * counts them in the fragment).
 */
function syntaxError(
  msg: string,
  errOffset: number,
  text: string,
  base: number,
  lines: LineIndex,
  local: LineIndex,
): DirigentError {
  const inFile = (line: number, col: number) =>
    lines.at(Math.max(0, base + local.offsetOf(line, col)));
  let location = lines.at(Math.max(0, base + errOffset));
  let what: string;
  let hint = SYNTAX_HINT;
  let m: RegExpExecArray | null;
  if (
    (m =
      /^Expected closing tag '([^']+)' \(opened in line (\d+), col (\d+)\) instead of closing tag '([^']+)'/.exec(
        msg,
      ))
  ) {
    const opened = inFile(Number(m[2]), Number(m[3]));
    what = `found </${m[4]}> where </${m[1]}> was expected (<${m[1]}> is opened at line ${opened.line}, column ${opened.column}).`;
    hint = `Close <${m[1]}> with </${m[1]}> before </${m[4]}>, or fix the name of the closing tag.`;
  } else if ((m = /^Unclosed tag '([^']+)'/.exec(msg))) {
    what = `<${m[1]}> is never closed.`;
    hint = `Add </${m[1]}> where the element ends, or write <${m[1]} …/> when it is empty.`;
  } else if ((m = /^Invalid '\[(.*)\]' found/s.exec(msg))) {
    const names = m[1]!.split(',').map((n) => n.trim().replace(/^"|"$/g, ''));
    const innermost = names[names.length - 1] ?? '';
    const opener = [
      ...text.matchAll(new RegExp(`<${escapeRegExp(innermost)}(?=[\\s>/])`, 'g')),
    ].pop();
    if (opener?.index !== undefined) location = lines.at(Math.max(0, base + opener.index));
    what = `${names.map((n) => `<${n}>`).join(', ')} are never closed.`;
    hint = `Close them, innermost first: ${[...names]
      .reverse()
      .map((n) => `</${n}>`)
      .join('')}.`;
  } else if ((m = /^Closing tag '([^']+)' has not been opened/.exec(msg))) {
    what = `</${m[1]}> closes an element that is not open.`;
    hint = `Remove </${m[1]}>, or add the <${m[1]}> it closes.`;
  } else if (
    (m = /^Attribute '([^']+)' is without value/.exec(msg)) ||
    (m = /^boolean attribute '([^']+)' is not allowed/.exec(msg))
  ) {
    what = `attribute "${m[1]}" has no quoted value.`;
    hint = `Write ${m[1]}="…": attribute values are always in quotes.`;
  } else if ((m = /^Attributes for '([^']+)' have open quote/.exec(msg))) {
    what = `an attribute value of <${m[1]}> has no closing quote.`;
    hint = 'End every quoted value with the quote it starts with: name="…".';
  } else if ((m = /^Attribute '([^']+)' is repeated/.exec(msg))) {
    what = `attribute "${m[1]}" is given twice.`;
    hint = `Keep one ${m[1]}="…".`;
  } else if ((m = /^Attribute '([^']+)' has no space in starting/.exec(msg))) {
    what = `attribute "${m[1]}" is not separated from the one before it.`;
    hint = 'Put a space between attributes: a="1" b="2".';
  } else if (/^char '&' is not expected/.test(msg)) {
    what = 'a bare "&" is not allowed in XML.';
    hint =
      'Write "&" as &amp; (and "<" as &lt;), or move prose after the closing fence, where it is read leniently.';
  } else if (/^Invalid space after '<'/.test(msg)) {
    const lt = text.lastIndexOf('<', errOffset);
    if (lt !== -1 && errOffset - lt <= 2) location = lines.at(Math.max(0, base + lt));
    what = 'a bare "<" is not allowed in XML.';
    hint =
      'Write "<" as &lt; (and "&" as &amp;), or move prose after the closing fence, where it is read leniently.';
  } else if ((m = /^Tag '([^']*)' is an invalid name/.exec(msg))) {
    what = `"<${m[1]}" is not a valid element name.`;
    hint = 'Element names start with a letter or "_"; write a "<" in text as &lt;.';
  } else if (/^Extra text at the end|^Multiple possible root nodes/.test(msg)) {
    what = 'there is content after the closing tag of the root element.';
    hint = 'Put everything inside <directive>…</directive>.';
  } else if (/^char '.' is not expected/.test(msg)) {
    const stray = /^[^<\n]{0,30}/.exec(text.slice(errOffset))![0].trim();
    what = `the text "${stray}" stands outside any element.`;
    hint = 'Start the XML with <directive …>; put prose in the Markdown around the fence.';
  } else if (/^Start tag expected/.test(msg)) {
    what = 'it holds no element.';
    hint = 'Write <directive name="…" version="1.0.0">…</directive>.';
  } else {
    what = msg;
  }
  return DirigentError.fatal(ErrorCode.XML_SYNTAX, `The XML is not well-formed: ${what}`, {
    location,
    hint,
    details: { parserMessage: msg },
  });
}

function restore(text: string): string {
  return text.includes(LT) || text.includes(AMP)
    ? text.replaceAll(LT, '<').replaceAll(AMP, '&')
    : text;
}

/** RYE keeps `<template>`, `<example>` and `<raw>` opaque: their content is text, whatever it holds. */
function maskOpaque(text: string): string {
  let out = text;
  for (const tag of OPAQUE_TAGS) {
    out = out.replace(
      new RegExp(`(<${tag}(?:\\s[^>]*)?>)([\\s\\S]*?)(</${tag}>)`, 'g'),
      (_m, open, body, close) => {
        return open + String(body).replaceAll('<', LT).replaceAll('&', AMP) + close;
      },
    );
  }
  return out;
}

const ENTITY = /^&(#\d+|#x[0-9a-fA-F]+|[A-Za-z][\w.-]*);/;

function escapeBareChars(
  chars: string[],
  base: number,
  lines: LineIndex,
  repairs: XmlRepair[],
): void {
  const text = chars.join('');
  for (let i = 0; i < chars.length; i++) {
    if (chars[i] === '&' && !ENTITY.test(text.slice(i, i + 12))) {
      chars[i] = AMP;
    } else if (chars[i] === '<' && !/[A-Za-z_/!?]/.test(chars[i + 1] ?? '')) {
      chars[i] = LT;
      repairs.push({ loc: lines.at(base + i), message: 'A bare "<" in text was kept as text.' });
    }
  }
}

/** Which `<` to turn into text so that validation gets further. */
function repairOffset(
  chars: string[],
  msg: string,
  errOffset: number,
  local: LineIndex,
): number | undefined {
  const text = chars.join('');
  const mismatch =
    /Expected closing tag '([^']+)' \(opened in line (\d+), col (\d+)\) instead of closing tag '([^']+)'/.exec(
      msg,
    );
  if (mismatch) {
    const closing = mismatch[4]!;
    const openerAt = local.offsetOf(Number(mismatch[2]), Number(mismatch[3]));
    const closingAt = text.lastIndexOf(`</${closing}`, errOffset);
    // If the closing tag belongs to an element opened earlier, the stray one is the opener.
    const openedBefore = new RegExp(`<${escapeRegExp(closing)}[\\s>/]`).test(
      text.slice(0, openerAt),
    );
    return openedBefore ? findLt(text, openerAt) : closingAt === -1 ? undefined : closingAt;
  }
  const unclosed = /^Invalid '\[(.*)\]' found/s.exec(msg);
  if (unclosed) {
    const names = unclosed[1]!.split(',').map((s) => s.trim().replace(/^"|"$/g, ''));
    const last = names[names.length - 1];
    if (last === undefined) return undefined;
    const m = [...text.matchAll(new RegExp(`<${escapeRegExp(last)}(?=[\\s>/])`, 'g'))].pop();
    return m?.index;
  }
  return findLt(text, errOffset);
}

function findLt(text: string, offset: number): number | undefined {
  const at = text.lastIndexOf('<', offset);
  return at === -1 ? undefined : at;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Adds `__at="offset"` to every start tag, skipping comments, CDATA and processing instructions. */
function injectPositions(text: string, base: number): string {
  const parts: string[] = [];
  let last = 0;
  const re =
    /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<\?[\s\S]*?\?>|<!(?!--)[^>]*>|<([A-Za-z_][\w.:-]*)/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[1] === undefined) continue;
    const end = m.index + m[0].length;
    parts.push(text.slice(last, end), ` ${POS_ATTR}="${base + m.index}"`);
    last = end;
  }
  parts.push(text.slice(last));
  return parts.join('');
}

/** The text content of an element and its descendants, trimmed of surrounding whitespace. */
export function textOf(node: XmlElement): string {
  return node.children
    .map((c) => (typeof c === 'string' ? c : textOf(c)))
    .join('')
    .trim();
}

/** Writes children back as XML-like text (for instruction steps made from RYE prose). */
export function serializeChildren(children: XmlChild[]): string {
  return children
    .map((c) => {
      if (typeof c === 'string') return c;
      const attrs = Object.entries(c.attrs)
        .map(([k, v]) => ` ${k}="${v}"`)
        .join('');
      return c.children.length === 0
        ? `<${c.tag}${attrs}/>`
        : `<${c.tag}${attrs}>${serializeChildren(c.children)}</${c.tag}>`;
    })
    .join('');
}

/** Child elements only (text dropped). */
export function elementsOf(node: XmlElement): XmlElement[] {
  return node.children.filter((c): c is XmlElement => typeof c !== 'string');
}
