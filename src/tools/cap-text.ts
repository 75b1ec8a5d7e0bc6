/** Output caps: text a tool returns stays within a size a run record and a reader can hold. */

/** Text cut to at most `maxChars` characters, and whether it was cut. */
export interface CappedText {
  text: string;
  truncated: boolean;
}

/**
 * `text` cut to at most `maxChars` characters, at the last line break before the cap when there
 * is one in its second half (so that a cut never splits a line needlessly).
 */
export function capText(text: string, maxChars: number): CappedText {
  if (text.length <= maxChars) return { text, truncated: false };
  const cut = text.lastIndexOf('\n', maxChars);
  return { text: text.slice(0, cut > maxChars / 2 ? cut + 1 : maxChars), truncated: true };
}

/**
 * One line cut to `maxChars`, keeping the part around `at` (a match's column, 0-based), with
 * `…` where text was left out: a minified file's 2 MB line shows as the text near its match.
 */
export function capLine(line: string, maxChars: number, at = 0): string {
  if (line.length <= maxChars) return line;
  const start = Math.max(0, Math.min(at - Math.floor(maxChars / 4), line.length - maxChars));
  const end = start + maxChars;
  return `${start > 0 ? '…' : ''}${line.slice(start, end)}${end < line.length ? '…' : ''}`;
}
