/**
 * Turns an XML fragment into a small tree whose elements remember where they start in the file.
 *
 * A fence (strict XML) is read in one pass (`read-fence-xml.ts`); whatever that pass does not
 * take, and the prose after the fence (read leniently), is read by fast-xml-parser
 * (`read-validated-xml.ts`), which reports errors with Dirigent's messages. Every rewriting of the
 * text is length-preserving (a `<` or `&` that must stay text becomes a private-use character and
 * is restored afterwards), so line and column numbers stay those of the original file.
 */
import type { LineIndex } from './line-index.js';
import { maskOpaque } from './mask-opaque.js';
import { readFenceXml } from './read-fence-xml.js';
import { readValidatedXml, type XmlRepair } from './read-validated-xml.js';
import type { XmlChild } from './xml-element.js';

export type { XmlRepair } from './read-validated-xml.js';

/**
 * Parses `fragment` (a slice of the file starting at `fragmentOffset`). Strict mode throws
 * `XML_SYNTAX` at the first error; lenient mode (RYE's prose after the fence) keeps stray `<`
 * and `&` as text and reports each repair.
 */
export function parseXmlFragment(
  fragment: string,
  fragmentOffset: number,
  lines: LineIndex,
  lenient: boolean,
): { nodes: XmlChild[]; repairs: XmlRepair[] } {
  if (!lenient) {
    const nodes = readFenceXml(maskOpaque(fragment), fragmentOffset, lines);
    if (nodes !== undefined) return { nodes, repairs: [] };
  }
  return readValidatedXml(fragment, fragmentOffset, lines, lenient);
}
