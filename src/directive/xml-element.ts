/** Walking and writing back the elements that the XML reader produces. */
import type { SourceLocation } from '../errors/source-location.js';

/** An element with its attributes, children (elements and text) and location. */
export interface XmlElement {
  tag: string;
  attrs: Record<string, string>;
  children: XmlChild[];
  /** Where the element's `<` is. */
  loc: SourceLocation;
  /** Where attribute `name` is written (computed on demand, for messages). */
  attrAt?: (name: string) => SourceLocation | undefined;
}

/** A child of an element: another element or a run of text. */
export type XmlChild = XmlElement | string;

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
