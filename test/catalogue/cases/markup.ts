/**
 * How catalogue cases are written: small directive texts with `‸` marks where errors must point.
 * Three single quotes stand for a Markdown code fence, so that cases can be template literals.
 */
import type { SourceLocation } from '../../../src/errors/index.js';

/** Marks the character an error must point at; removed before the text is parsed. */
export const MARK = '‸';
/** The file name parse cases are read as (its stem matches the default directive name). */
export const FILE = 'catalogue/case.md';

/** A directive that the parser must reject. */
export interface Malformed {
  /** What the case shows, as a specification: the test's name. */
  spec: string;
  /** The file, with a `‸` per expected diagnostic, in file order. */
  text: string;
  /** The code of the error (and of the first diagnostic). */
  code: string;
  /** Codes of further diagnostics, in file order, one per further `‸`. */
  more?: string[];
  /** Texts the error's message must contain (the "what", a "did you mean"). */
  says?: string[];
}

/** Removes a leading newline, trailing blank space and the indentation common to all lines. */
export function dedent(text: string): string {
  const lines = text.replace(/^\n/, '').replace(/\s+$/, '').split('\n');
  const indent = Math.min(
    ...lines.filter((l) => l.trim() !== '').map((l) => /^ */.exec(l)![0].length),
  );
  return lines.map((l) => l.slice(indent)).join('\n');
}

/** A whole file, in which three single quotes stand for a code fence. */
export function md(text: string): string {
  return `${dedent(text).replaceAll("'''", '```')}\n`;
}

/** A file whose ```xml block holds `xml`. */
export function fenced(xml: string): string {
  return md(`# Case\n\n'''xml\n${dedent(xml)}\n'''`);
}

/** A file holding `<directive name="NAME" version="1.0.0">` around `body`. */
export function directive(body: string, name = 'case'): string {
  const inner = dedent(body)
    .split('\n')
    .map((l) => (l === '' ? l : `  ${l}`))
    .join('\n');
  return fenced(`<directive name="${name}" version="1.0.0">\n${inner}\n</directive>`);
}

/** The text without its `‸` marks, and the line and column of each mark in `file`. */
export function locate(text: string, file: string): { source: string; marks: SourceLocation[] } {
  const marks: SourceLocation[] = [];
  let source = '';
  let line = 1;
  let column = 1;
  for (const ch of text) {
    if (ch === MARK) {
      marks.push({ file, line, column });
      continue;
    }
    source += ch;
    if (ch === '\n') {
      line++;
      column = 1;
    } else column++;
  }
  return { source, marks };
}
