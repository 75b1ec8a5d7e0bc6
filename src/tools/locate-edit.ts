/**
 * Where a targeted edit (`old` → `new`) applies in a file's text: exactly first, then with the
 * lines compared leniently, so that an `old` copied with other trailing spaces, other line
 * endings or other indentation still finds its place, but only one place. Pure.
 */

/** How `old` was found. */
export type MatchKind = 'exact' | 'whitespace' | 'indentation';

/** One place `old` was found: the text in `[start, end)` is replaced by `replacement`. */
export interface EditSite {
  start: number;
  end: number;
  /** 1-based line of `start`. */
  line: number;
  replacement: string;
}

/** The places found, all of one kind (none when `old` is not in the text even leniently). */
export interface EditLocation {
  kind: MatchKind;
  sites: EditSite[];
}

/** Lines compared on their text without trailing whitespace (`\r` included). */
const trimEnd = (line: string) => line.trimEnd();
/** Lines compared on their words: indentation and runs of spaces do not count. */
const words = (line: string) => line.trim().replace(/\s+/g, ' ');

/**
 * Every place of `old` in `text` and the text that replaces it. Exact occurrences first (with
 * `old` and `new` turned to `\r\n` line endings when the file uses them); failing that, runs of
 * whole lines equal to `old`'s lines once trailing whitespace is dropped (`whitespace`); failing
 * that, once indentation and inner spacing are dropped too (`indentation`), where `new` is
 * re-indented by the difference between the file's indentation and `old`'s.
 */
export function locateEdit(text: string, old: string, replacement: string): EditLocation {
  const crlf = /\r\n/.test(text) && !old.includes('\r');
  const exactOld = crlf ? old.replace(/\n/g, '\r\n') : old;
  const exactNew = crlf ? replacement.replace(/\r?\n/g, '\r\n') : replacement;
  const exact = occurrences(text, exactOld).map((start) => ({
    start,
    end: start + exactOld.length,
    line: lineOf(text, start),
    replacement: exactNew,
  }));
  if (exact.length > 0) return { kind: 'exact', sites: exact };
  for (const [kind, norm] of [
    ['whitespace', trimEnd],
    ['indentation', words],
  ] as const) {
    const sites = lineSites(text, old, replacement, norm, kind === 'indentation', crlf);
    if (sites.length > 0) return { kind, sites };
  }
  return { kind: 'exact', sites: [] };
}

/** Start offsets of the non-overlapping occurrences of `needle`. */
function occurrences(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length))
    out.push(at);
  return out;
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** The runs of whole lines of `text` equal to `old`'s lines under `norm`, not overlapping. */
function lineSites(
  text: string,
  old: string,
  replacement: string,
  norm: (line: string) => string,
  reindent: boolean,
  crlf: boolean,
): EditSite[] {
  const want = splitLines(old.replace(/\r\n/g, '\n')).map(norm);
  if (want.every((l) => l === '')) return [];
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  const lineAt = (n: number) => text.slice(starts[n]!, (starts[n + 1] ?? text.length + 1) - 1);
  const lines = starts.map((_, n) => lineAt(n));
  const normalized = lines.map(norm);
  const sites: EditSite[] = [];
  for (let i = 0; i + want.length <= lines.length; i++) {
    if (!want.every((w, k) => normalized[i + k] === w)) continue;
    const last = i + want.length - 1;
    // The run ends before the line break of its last line (and before a `\r` there).
    const end = starts[last]! + lines[last]!.replace(/\r$/, '').length;
    // `old`'s final line break, if any, is not in the run: `new`'s is left out likewise.
    let newText = replacement.replace(/\r\n/g, '\n');
    if (old.endsWith('\n')) newText = newText.replace(/\n$/, '');
    if (reindent)
      newText = reindented(newText, indentOf(old), indentOf(lines.slice(i, last + 1).join('\n')));
    if (crlf) newText = newText.replace(/\n/g, '\r\n');
    sites.push({ start: starts[i]!, end, line: i + 1, replacement: newText });
    i = last;
  }
  return sites;
}

/** The lines of `text`, without a last empty one after a final line break. */
function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The leading whitespace of the first line of `text` that has any text. */
function indentOf(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  return /^[ \t]*/.exec(line)![0];
}

/** `text` with each line's leading `from` replaced by `to`. */
function reindented(text: string, from: string, to: string): string {
  if (from === to) return text;
  return text
    .split('\n')
    .map((line) =>
      line.trim() === '' ? line : line.startsWith(from) ? to + line.slice(from.length) : line,
    )
    .join('\n');
}
