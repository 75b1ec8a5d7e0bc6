/**
 * The one-pass fence reader against the validating reader (fast-xml-parser): whenever the
 * one-pass reader takes a fence, it builds the very tree the validating reader builds (tags,
 * attributes, text, the place of every element and attribute), and it never takes a fence that
 * the validating reader refuses. What it does not take, it leaves to the validating reader, so an
 * error reads as it always has.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineIndex } from '../../../src/directive/line-index.js';
import { maskOpaque } from '../../../src/directive/mask-opaque.js';
import { readFenceXml } from '../../../src/directive/read-fence-xml.js';
import { readValidatedXml } from '../../../src/directive/read-validated-xml.js';
import { splitMarkdown } from '../../../src/directive/split-markdown.js';
import type { XmlChild } from '../../../src/directive/xml-element.js';
import { DirigentError } from '../../../src/errors/index.js';
import { realisticDirective } from '../../../bench/realistic-directive.js';
import { FILE_AND_XML } from '../../catalogue/cases/file-and-xml.js';
import { DIRECTIVE_AND_INPUTS } from '../../catalogue/cases/directive-and-inputs.js';
import { STEPS } from '../../catalogue/cases/steps.js';
import { EDGES_AND_CONTROL } from '../../catalogue/cases/edges-and-control.js';
import { DATA_AND_PERMISSIONS } from '../../catalogue/cases/data-and-permissions.js';
import { MARK } from '../../catalogue/cases/markup.js';
import { DIRECTIVES } from '../../support/paths.js';

const RUNS = Number(process.env.DIRIGENT_FUZZ_RUNS ?? 300);
const GOLDEN = join(import.meta.dirname, '..', '..', 'golden', 'cases');

/** Real directive files: the examples, the golden cases, the benchmark's and the catalogue's. */
const CORPUS = [
  ...readdirSync(DIRECTIVES)
    .filter((f) => f.endsWith('.md'))
    .map((f) => readFileSync(join(DIRECTIVES, f), 'utf8')),
  ...readdirSync(GOLDEN)
    .filter((f) => f.endsWith('.md'))
    .map((f) => readFileSync(join(GOLDEN, f), 'utf8')),
  realisticDirective.text,
  ...[
    ...FILE_AND_XML,
    ...DIRECTIVE_AND_INPUTS,
    ...STEPS,
    ...EDGES_AND_CONTROL,
    ...DATA_AND_PERMISSIONS,
  ].map((c) => c.text.replaceAll(MARK, '')),
];

/** An element as plain data: what the directive reader can see of it. */
function plain(node: XmlChild): unknown {
  if (typeof node === 'string') return node;
  return {
    tag: node.tag,
    attrs: { ...node.attrs },
    attrAt: Object.fromEntries(Object.keys(node.attrs).map((a) => [a, node.attrAt?.(a)])),
    loc: node.loc,
    children: node.children.map(plain),
  };
}

const elements = (nodes: XmlChild[]) => nodes.filter((n) => typeof n !== 'string').map(plain);

/** Both readers on the fence `xml` at `offset` of `text`. */
function both(text: string, xml: string, offset: number) {
  const lines = new LineIndex('case.md', text);
  const fast = readFenceXml(maskOpaque(xml), offset, lines);
  let validated: XmlChild[] | DirigentError;
  try {
    validated = readValidatedXml(xml, offset, lines, false).nodes;
  } catch (err) {
    if (!(err instanceof DirigentError)) throw err;
    validated = err;
  }
  return { fast, validated };
}

/** Checks the promise of the module comment on one fence. */
function agrees(text: string, xml: string, offset: number): void {
  const { fast, validated } = both(text, xml, offset);
  if (fast === undefined) return;
  expect(
    validated,
    'the validating reader accepts what the one-pass reader takes',
  ).not.toBeInstanceOf(DirigentError);
  expect(elements(fast)).toEqual(elements(validated as XmlChild[]));
}

function fenceOf(text: string): { xml: string; offset: number } | undefined {
  try {
    const parts = splitMarkdown(text, new LineIndex('case.md', text));
    return { xml: parts.xml, offset: parts.xmlOffset };
  } catch {
    return undefined;
  }
}

/** A fence alone in a file, at offset 7 (after the fence line). */
const lone = (xml: string) => ({ text: '```xml\n' + xml + '\n```\n', xml, offset: 7 });

describe('the one-pass fence reader', () => {
  it('builds the tree of every directive of the corpus as the validating reader does', () => {
    let taken = 0;
    for (const text of CORPUS) {
      const fence = fenceOf(text);
      if (fence === undefined) continue;
      agrees(text, fence.xml, fence.offset);
      if (both(text, fence.xml, fence.offset).fast !== undefined) taken++;
    }
    expect(taken, 'most of the corpus is read in one pass').toBeGreaterThan(CORPUS.length / 2);
  });

  it.each([
    ['text around a comment is one run', '<a>x <!-- note --> y<b/></a>'],
    ['line breaks and tabs inside attribute values are kept', '<a v="1\n\t2" w="x"\n   z="\t"/>'],
    ['CRLF line breaks become LF, in text and in values', '<a v="1\r\n2">x\r\ny\r</a>'],
    ['references decode in text and values', '<a v="&lt;&#10;&#x41;&quot;">&amp;&#65;&gt;</a>'],
    ['opaque elements keep < and & as text', '<a><template>if a < b && c</template></a>'],
    ['several attributes, either quote', `<a x='1' y="2"   z = "3" />`],
    ['astral characters before an element keep its column', '<a>😀😀<b c="😀"/></a>'],
  ])('reads as the validating reader does: %s', (_what, xml) => {
    const { text, offset } = lone(xml);
    const { fast } = both(text, xml, offset);
    expect(fast, 'taken in one pass').toBeDefined();
    agrees(text, xml, offset);
  });

  it.each([
    ['an XML declaration', '<?xml version="1.0"?><a/>'],
    ['a processing instruction', '<a><?php echo 1; ?></a>'],
    ['CDATA', '<a><![CDATA[x < y]]></a>'],
    ['a document type declaration', '<!DOCTYPE a><a/>'],
    ['nesting deeper than 64 levels', '<a>'.repeat(65) + '</a>'.repeat(65)],
    ['a bare & in an attribute value', '<a v="x & y"/>'],
    ['an unknown named reference', '<a>&nbsp;</a>'],
    ['an unclosed element', '<a><b></a>'],
    ['a second root', '<a/><b/>'],
    ['a name beyond the Basic Multilingual Plane', '<a b😀="1"/>'],
    ['a lone surrogate', '<a>\ud83d<b/></a>'],
  ])('leaves %s to the validating reader', (_what, xml) => {
    const { text, offset } = lone(xml);
    expect(both(text, xml, offset).fast).toBeUndefined();
  });

  it('never takes a mutated fence that the validating reader refuses, nor reads one otherwise', () => {
    const fences = CORPUS.map(fenceOf).filter((f) => f !== undefined);
    const pieces = fc.constantFrom(
      ...[...'<>/&;"\'=!?-\n\r\t ax'],
      '<!--',
      '-->',
      '<![CDATA[',
      ']]>',
      '&#0;',
      '&#65;',
      '&lt;',
      '&nbsp;',
      '<template>',
      '</template>',
      '<step name="x">',
      '</step>',
      '<b/>',
      ' v="1"',
      '\u00e9',
      '😀',
      '\ud83d',
    );
    const mutation = fc.record({
      at: fc.nat(),
      len: fc.nat({ max: 8 }),
      insert: fc.array(pieces, { maxLength: 4 }).map((p) => p.join('')),
    });
    fc.assert(
      fc.property(
        fc.nat({ max: fences.length - 1 }),
        fc.array(mutation, { minLength: 1, maxLength: 3 }),
        (which, mutations) => {
          let xml = fences[which]!.xml;
          for (const m of mutations) {
            const at = m.at % (xml.length + 1);
            xml = xml.slice(0, at) + m.insert + xml.slice(at + m.len);
          }
          const { text, offset } = lone(xml);
          agrees(text, xml, offset);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
