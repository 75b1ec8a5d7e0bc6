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
  loc: SourceLocation;
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
  text: string,
  baseOffset: number,
  lines: LineIndex,
  lenient: boolean,
): { nodes: XmlChild[]; repairs: XmlRepair[] } {
  const chars = maskOpaque(text).split('');
  const repairs: XmlRepair[] = [];
  if (lenient) escapeBareChars(chars, baseOffset, lines, repairs);
  for (let round = 0; ; round++) {
    const result = XMLValidator.validate(chars.join(''), { allowBooleanAttributes: false });
    if (result === true) break;
    const local = new LineIndex('', chars.join(''));
    const errOffset = local.offsetOf(result.err.line, result.err.col);
    if (!lenient || round >= MAX_REPAIRS) {
      throw DirigentError.fatal(ErrorCode.XML_SYNTAX, `The XML is not well-formed: ${result.err.msg}`, {
        location: lines.at(baseOffset + errOffset),
        hint: 'Close every element you open, quote attribute values, and write < and & in text as &lt; and &amp;.',
      });
    }
    const at = repairOffset(chars, result.err.msg, errOffset, local);
    if (at === undefined || chars[at] !== '<') {
      throw DirigentError.fatal(ErrorCode.XML_SYNTAX, `The XML is not well-formed: ${result.err.msg}`, {
        location: lines.at(baseOffset + errOffset),
      });
    }
    chars[at] = LT;
    repairs.push({
      loc: lines.at(baseOffset + at),
      message: `Text is not well-formed XML (${result.err.msg}); "<" kept as text.`,
    });
  }
  const withPositions = injectPositions(chars.join(''), baseOffset);
  const raw = parser.parse(withPositions) as RawNode[];
  return { nodes: raw.map((n) => convert(n, lines)), repairs };
}

type RawNode = Record<string, unknown>;

function convert(node: RawNode, lines: LineIndex): XmlChild {
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
  return { tag, attrs, children: kids.map((k) => convert(k, lines)), loc: lines.at(offset) };
}

function restore(text: string): string {
  return text.includes(LT) || text.includes(AMP) ? text.replaceAll(LT, '<').replaceAll(AMP, '&') : text;
}

/** RYE keeps `<template>`, `<example>` and `<raw>` opaque: their content is text, whatever it holds. */
function maskOpaque(text: string): string {
  let out = text;
  for (const tag of OPAQUE_TAGS) {
    out = out.replace(new RegExp(`(<${tag}(?:\\s[^>]*)?>)([\\s\\S]*?)(</${tag}>)`, 'g'), (_m, open, body, close) => {
      return open + String(body).replaceAll('<', LT).replaceAll('&', AMP) + close;
    });
  }
  return out;
}

const ENTITY = /^&(#\d+|#x[0-9a-fA-F]+|[A-Za-z][\w.-]*);/;

function escapeBareChars(chars: string[], base: number, lines: LineIndex, repairs: XmlRepair[]): void {
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
function repairOffset(chars: string[], msg: string, errOffset: number, local: LineIndex): number | undefined {
  const text = chars.join('');
  const mismatch = /Expected closing tag '([^']+)' \(opened in line (\d+), col (\d+)\) instead of closing tag '([^']+)'/.exec(msg);
  if (mismatch) {
    const closing = mismatch[4]!;
    const openerAt = local.offsetOf(Number(mismatch[2]), Number(mismatch[3]));
    const closingAt = text.lastIndexOf(`</${closing}`, errOffset);
    // If the closing tag belongs to an element opened earlier, the stray one is the opener.
    const openedBefore = new RegExp(`<${escapeRegExp(closing)}[\\s>/]`).test(text.slice(0, openerAt));
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
  const re = /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<\?[\s\S]*?\?>|<!(?!--)[^>]*>|<([A-Za-z_][\w.:-]*)/g;
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
  return node.children.map((c) => (typeof c === 'string' ? c : textOf(c))).join('').trim();
}

/** Writes children back as XML-like text (for instruction steps made from RYE prose). */
export function serializeChildren(children: XmlChild[]): string {
  return children
    .map((c) => {
      if (typeof c === 'string') return c;
      const attrs = Object.entries(c.attrs)
        .map(([k, v]) => ` ${k}="${v}"`)
        .join('');
      return c.children.length === 0 ? `<${c.tag}${attrs}/>` : `<${c.tag}${attrs}>${serializeChildren(c.children)}</${c.tag}>`;
    })
    .join('');
}

/** Child elements only (text dropped). */
export function elementsOf(node: XmlElement): XmlElement[] {
  return node.children.filter((c): c is XmlElement => typeof c !== 'string');
}
