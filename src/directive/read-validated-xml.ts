/**
 * Reads XML with fast-xml-parser: its validator finds the first error (reworded in
 * `xml-syntax.ts`), and its parser records where each element starts (`captureMetaData`). This is
 * how the prose after a fence is read (leniently, repairing stray `<` and `&`), and how a fence is
 * read when the one-pass reader (`read-fence-xml.ts`) does not take it, so that every error keeps
 * the message, line and column it has always had.
 */
import type * as FastXmlParser from 'fast-xml-parser';
import type { XMLParser } from 'fast-xml-parser';
import type { SourceLocation } from '../errors/source-location.js';
import { attributeOffsets } from './attribute-offsets.js';
import { LineIndex } from './line-index.js';
import { MASKED_AMP, MASKED_LT, maskOpaque, unmask } from './mask-opaque.js';
import type { XmlChild } from './xml-element.js';
import { repairOffset, syntaxError } from './xml-syntax.js';
import { checkXmlShape } from './xml-shape.js';
import { decodeEntities } from './xml-entities.js';
import { lazyPackage } from '../lazy-package.js';
import { xmlTooDeep } from '../errors/directive-errors.js';

/** A repair made to text that was not well-formed XML (lenient mode only). */
export interface XmlRepair {
  loc: SourceLocation;
  message: string;
}

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

/** fast-xml-parser, loaded by the first fragment the one-pass reader does not take. */
const fastXmlParser = lazyPackage<typeof FastXmlParser>('fast-xml-parser');
let reader: { parser: XMLParser; meta: symbol } | undefined;

/** The parser (made on first use) and the key under which it records where elements start. */
function xmlReader(): { parser: XMLParser; meta: symbol } {
  if (reader !== undefined) return reader;
  const { XMLParser: Parser } = fastXmlParser();
  // fast-xml-parser types the key as `Symbol` (the wrapper type); it is a symbol.
  const meta = Parser.getMetaDataSymbol() as unknown as symbol;
  reader = { parser: new Parser({ ...XML_PARSER_OPTIONS, captureMetaData: true }), meta };
  return reader;
}

/**
 * Parses `fragment` (a slice of the file starting at `fragmentOffset`) with fast-xml-parser's
 * validator and parser. Strict mode throws `XML_SYNTAX` at the first error; lenient mode (RYE's
 * prose after the fence) keeps stray `<` and `&` as text and reports each repair.
 */
export function readValidatedXml(
  fragment: string,
  fragmentOffset: number,
  lines: LineIndex,
  lenient: boolean,
): { nodes: XmlChild[]; repairs: XmlRepair[] } {
  // Prose after the fence holds several elements and text: one wrapper makes it a document.
  // Offsets below are in the wrapped text, so the file offset is `baseOffset + local`.
  const text = lenient ? WRAP_OPEN + fragment + WRAP_CLOSE : fragment;
  const baseOffset = lenient ? fragmentOffset - WRAP_OPEN.length : fragmentOffset;
  const { XMLValidator } = fastXmlParser();
  const opaque = maskOpaque(text);
  checkXmlShape(opaque, baseOffset, lines);
  const repairs: XmlRepair[] = [];
  // A fence (strict) that is well-formed is validated as the string it is: splitting it into
  // characters and joining them again costs more than validating it.
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
    chars[at] = MASKED_LT;
    repairs.push({
      loc: lines.at(baseOffset + at),
      message: `Text is not well-formed XML (${result.err.msg}); "<" kept as text.`,
    });
  }
  const masked = strictOk ? opaque : chars.join('');
  const src: Source = { text: masked, base: baseOffset, lines };
  const nodes = parseTree(masked, baseOffset, lines).map((n) => convert(n, src, undefined));
  const wrapper = nodes[0];
  return {
    nodes:
      lenient && wrapper !== undefined && typeof wrapper !== 'string' ? wrapper.children : nodes,
    repairs,
  };
}

type RawNode = Record<string | symbol, unknown>;

/** fast-xml-parser's tree; its own nesting limit (which the shape check should meet first) located. */
function parseTree(text: string, base: number, lines: LineIndex): RawNode[] {
  try {
    return xmlReader().parser.parse(text) as RawNode[];
  } catch (err) {
    throw xmlTooDeep(
      `The XML could not be read: ${(err as Error).message}`,
      lines.at(Math.max(0, base)),
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
  if ('#text' in node) return unmask(decodeEntities(String(node['#text']), parent));
  const attrs: Record<string, string> = {};
  let tag = '';
  let kids: RawNode[] = [];
  let raw: Record<string, unknown> = {};
  for (const key of Object.keys(node)) {
    if (key === ':@') raw = node[key] as Record<string, unknown>;
    else {
      tag = key;
      kids = node[key] as RawNode[];
    }
  }
  // The offset of the element's `<` in `src.text`, as fast-xml-parser records it.
  const start = (node[xmlReader().meta] as { startIndex: number }).startIndex;
  const loc = src.lines.at(Math.max(0, src.base + start));
  for (const [name, value] of Object.entries(raw))
    attrs[name] = unmask(decodeEntities(String(value), loc));
  // Attribute places are only needed for messages, so the tag is scanned when one is asked for.
  const attrAt = (name: string): SourceLocation | undefined => {
    const at = Object.hasOwn(attrs, name) ? attributeOffsets(src.text, start)[name] : undefined;
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
      chars[i] = MASKED_AMP;
    } else if (chars[i] === '<' && !/[A-Za-z_/!?]/.test(chars[i + 1] ?? '')) {
      chars[i] = MASKED_LT;
      repairs.push({ loc: lines.at(base + i), message: 'A bare "<" in text was kept as text.' });
    }
  }
}
