/**
 * Finding a pattern in text, line by line, in time linear in the text: regular expressions run
 * on RE2 (`re2js`), which never backtracks, so no pattern can make a search take exponential
 * time; a plain string (`literal`) is found with `indexOf`.
 */
import type * as Re2jsPackage from 're2js';
import { lazyPackage } from '../lazy-package.js';
import { DirigentError, ErrorCode } from '../errors/index.js';

const re2js = lazyPackage<typeof Re2jsPackage>('re2js');

/** Finds the first match at or after a position of a text; one per text searched. */
export type TextFinder = (text: string) => (from: number) => number;

/** How to read the pattern. */
export interface FinderOptions {
  /** The pattern is plain text, not a regular expression. */
  literal: boolean;
  caseInsensitive: boolean;
}

/**
 * A finder for `pattern`: called with a text, it returns a function giving the start of the first
 * match at or after `from`, or -1. `^` and `$` match at line starts and ends. A pattern that RE2
 * does not read (look-around, back-references, a syntax error) is a fatal `INVALID_PATTERN`.
 */
export function textFinder(pattern: string, options: FinderOptions): TextFinder {
  if (options.literal && !options.caseInsensitive) {
    return (text) => (from) => text.indexOf(pattern, from);
  }
  const { RE2JS } = re2js();
  const flags = RE2JS.MULTILINE | (options.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  let re: Re2jsPackage.RE2JS;
  try {
    re = RE2JS.compile(options.literal ? RE2JS.quote(pattern) : pattern, flags);
  } catch (err) {
    throw DirigentError.fatal(
      ErrorCode.INVALID_PATTERN,
      `pattern ${JSON.stringify(pattern)} is not a regular expression RE2 reads: ${(err as Error).message}`,
      {
        hint: 'Fix pattern (RE2 syntax: no look-around or back-references), or set literal to true to search for the text as it is.',
        details: { pattern },
        cause: err,
      },
    );
  }
  return (text) => {
    const matcher = re.matcher(text);
    return (from) => (from <= text.length && matcher.find(from) ? matcher.start() : -1);
  };
}

/**
 * A text every match of `pattern` holds, for a search to skip files without it: the literal
 * characters a case-sensitive pattern starts with (escaped punctuation included), before any
 * alternation, class, group or quantifier; undefined when that is under 3 characters.
 */
export function requiredText(pattern: string, options: FinderOptions): string | undefined {
  if (options.caseInsensitive) return undefined;
  if (options.literal) return pattern;
  if (pattern.includes('|')) return undefined;
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && /[^A-Za-z0-9]/.test(pattern[i + 1] ?? 'a')) {
      out += pattern[++i]!;
    } else if (/[\\^$.|?*+()[\]{}]/.test(ch)) {
      // A quantifier makes the character before it optional (or repeated): it is not required.
      if (/[?*{]/.test(ch)) out = out.slice(0, -1);
      break;
    } else out += ch;
  }
  return out.length >= 3 ? out : undefined;
}

/** One line of a text that holds a match. */
export interface LineMatch {
  /** 1-based line number. */
  line: number;
  /** 0-based offset of the first match in the line. */
  column: number;
  /** Offsets of the line's start and end (before its `\n`) in the text. */
  start: number;
  end: number;
}

/**
 * Calls `each` for every line of `text` holding a match of `find` (once per line, at its first
 * match), in order, until `each` returns false. Linear in the text.
 */
export function eachMatchingLine(
  text: string,
  find: (from: number) => number,
  each: (match: LineMatch) => boolean,
): void {
  let lineNo = 1;
  let lineStart = 0;
  let from = 0;
  while (from <= text.length) {
    const at = find(from);
    if (at < 0) return;
    // Count the lines between the last match's line and this one.
    let nl = text.indexOf('\n', lineStart);
    while (nl !== -1 && nl < at) {
      lineNo++;
      lineStart = nl + 1;
      nl = text.indexOf('\n', lineStart);
    }
    const end = nl === -1 ? text.length : nl;
    if (!each({ line: lineNo, column: at - lineStart, start: lineStart, end })) return;
    if (nl === -1) return;
    from = nl + 1;
  }
}

/** The text of lines `[start, end)` of `text`, a line's `\r` dropped. */
export function lineText(text: string, start: number, end: number): string {
  return text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end);
}

/** Up to `count` lines before the line starting at `lineStart`, oldest first. */
export function linesBefore(text: string, lineStart: number, count: number): string[] {
  const out: string[] = [];
  let end = lineStart - 1;
  while (out.length < count && end >= 0) {
    const start = text.lastIndexOf('\n', end - 1) + 1;
    out.unshift(lineText(text, start, end));
    end = start - 1;
  }
  return out;
}

/** Up to `count` lines after the line ending at `lineEnd` (the offset of its `\n`). */
export function linesAfter(text: string, lineEnd: number, count: number): string[] {
  const out: string[] = [];
  let start = lineEnd + 1;
  while (out.length < count && start <= text.length && lineEnd < text.length) {
    if (start === text.length) break; // the text ends with a line break: no line after it
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl;
    out.push(lineText(text, start, end));
    if (nl === -1) break;
    start = nl + 1;
  }
  return out;
}
