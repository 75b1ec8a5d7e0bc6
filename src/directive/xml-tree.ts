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
import type { XmlChild } from './xml-element.js';
import { repairOffset, syntaxError } from './xml-syntax.js';
import { checkXmlShape } from './xml-shape.js';
import { decodeEntities } from './xml-entities.js';

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
/** The most characters the lenient repair rounds validate in all (rounds × length). */
const MAX_REPAIR_WORK = 20_000_000;
const WRAP_OPEN = '<dirigent-body>';
const WRAP_CLOSE = '</dirigent-body>';

/** How directives' XML is parsed (exported so the benchmark's baseline parses alike). */
export const XML_PARSER_OPTIONS = {
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  allowBooleanAttributes: false,
  // Entities are decoded by this module (numeric references included); a DOCTYPE is refused.
  processEntities: false,
} as const;

const parser = new XMLParser(XML_PARSER_OPTIONS);

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
  const opaque = maskOpaque(text);
  checkXmlShape(opaque, baseOffset, lines);
  const repairs: XmlRepair[] = [];
  // A fence (strict) that is well-formed, the common case, is validated as the string it is:
  // splitting 4 KB into characters and joining them again costs more than validating it.
  const strictOk =
    !lenient && XMLValidator.validate(opaque, { allowBooleanAttributes: false }) === true;
  const chars = strictOk ? [] : opaque.split('');
  if (lenient) escapeBareChars(chars, baseOffset, lines, repairs);
  // Each round validates the whole text again: the rounds are bounded by its size as well.
  const maxRepairs = Math.min(MAX_REPAIRS, Math.ceil(MAX_REPAIR_WORK / Math.max(1, text.length)));
  for (let round = 0; !strictOk; round++) {
    const result = XMLValidator.validate(chars.join(''), { allowBooleanAttributes: false });
    if (result === true) break;
    const local = new LineIndex('', chars.join(''));
    const errOffset = local.offsetOf(result.err.line, result.err.col);
    if (!lenient || round >= maxRepairs)
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
  const masked = strictOk ? opaque : chars.join('');
  const withPositions = injectPositions(masked, baseOffset);
  const src: Source = { text: masked, base: baseOffset, lines };
  const nodes = parseTree(withPositions, baseOffset, lines).map((n) => convert(n, src, undefined));
  const wrapper = nodes[0];
  return {
    nodes:
      lenient && wrapper !== undefined && typeof wrapper !== 'string' ? wrapper.children : nodes,
    repairs,
  };
}

type RawNode = Record<string, unknown>;

/** fast-xml-parser's tree; its own nesting limit (which the shape check should meet first) located. */
function parseTree(text: string, base: number, lines: LineIndex): RawNode[] {
  try {
    return parser.parse(text) as RawNode[];
  } catch (err) {
    throw DirigentError.fatal(
      ErrorCode.XML_TOO_DEEP,
      `The XML could not be read: ${(err as Error).message}.`,
      {
        location: lines.at(Math.max(0, base)),
        hint: 'Flatten the structure: move deep blocks into their own steps or child directives.',
      },
    );
  }
}

/** The fragment being converted: its (masked, same-length) text and where it starts in the file. */
interface Source {
  text: string;
  base: number;
  lines: LineIndex;
}

function convert(node: RawNode, src: Source, parent: SourceLocation | undefined): XmlChild {
  if ('#text' in node) return restore(decodeEntities(String(node['#text']), parent));
  const attrs: Record<string, string> = {};
  let offset = 0;
  let tag = '';
  let kids: RawNode[] = [];
  const raw: [string, unknown][] = [];
  for (const key of Object.keys(node)) {
    if (key === ':@') {
      for (const [name, value] of Object.entries(node[key] as Record<string, unknown>)) {
        if (name === POS_ATTR) offset = Number(value);
        else raw.push([name, value]);
      }
    } else {
      tag = key;
      kids = node[key] as RawNode[];
    }
  }
  const loc = src.lines.at(Math.max(0, offset));
  for (const [name, value] of raw) attrs[name] = restore(decodeEntities(String(value), loc));
  // Attribute places are only needed for messages, so the tag is scanned when one is asked for.
  const attrAt = (name: string): SourceLocation | undefined => {
    const at = name in attrs ? attributeOffsets(src.text, offset - src.base)[name] : undefined;
    return at === undefined ? undefined : src.lines.at(Math.max(0, src.base + at));
  };
  return {
    tag,
    attrs,
    children: kids.map((k) => convert(k, src, loc)),
    loc,
    attrAt,
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
  while (i < text.length && !isNameEnd(text.charCodeAt(i))) i++;
  while (i < text.length) {
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    const c = text[i];
    if (c === undefined || c === '>' || c === '/') break;
    const nameStart = i;
    while (i < text.length && !isNameEnd(text.charCodeAt(i)) && text[i] !== '=') i++;
    const name = text.slice(nameStart, i);
    if (name === '') break;
    if (!(name in out)) out[name] = nameStart;
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    if (text[i] !== '=') continue;
    i++;
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    const quote = text[i];
    if (quote === '"' || quote === "'") {
      const end = text.indexOf(quote, i + 1);
      i = end === -1 ? text.length : end + 1;
    } else {
      while (i < text.length && !isSpace(text.charCodeAt(i)) && text[i] !== '>') i++;
    }
  }
  return out;
}

/** What `/\s/` matches, without running a regular expression per character of every start tag. */
function isSpace(code: number): boolean {
  if (code === 32 || (code >= 9 && code <= 13)) return true;
  return code > 127 && /\s/.test(String.fromCharCode(code));
}

/** Where a tag or attribute name ends: white space, `/` or `>`. */
function isNameEnd(code: number): boolean {
  return code === 47 || code === 62 || isSpace(code);
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
    if (!out.includes(`<${tag}`)) continue;
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
