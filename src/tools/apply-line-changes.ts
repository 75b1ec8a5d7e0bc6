/** Line-range edits (RYE's `edit_lines`): replacing, deleting or inserting whole lines. Pure. */
import { DirigentError, ErrorCode } from '../errors/index.js';
import { lineId } from './line-id.js';

/** One change as a tool call gives it: lines by number (1-based, inclusive) or by RYE line id. */
export interface LineChange {
  start_line?: number;
  end_line?: number;
  line_id?: string;
  start_line_id?: string;
  end_line_id?: string;
  new_content: string;
}

/** What applying the changes made. */
export interface LinesChanged {
  text: string;
  changesApplied: number;
  /** Per change, the larger of the lines removed and the lines written (RYE's count). */
  linesChanged: number;
}

/**
 * `text` with `changes` applied, bottom-up so that each change's line numbers are those of the
 * original text. A change replaces lines `start_line`..`end_line` (default: `start_line`) with
 * `new_content`'s lines (one final line break in it does not add an empty line; empty content
 * deletes); `end_line` one less than `start_line` inserts before it. Ids name lines as RYE's
 * `read` does ({@link lineId}). The file's line ending (`\r\n` or `\n`) and its final line break
 * are kept. Changes that overlap, lines out of range (`LINE_OUT_OF_RANGE`) and ids the file no
 * longer has (`STALE_LINE_ID`) are refused before anything changes.
 */
export function applyLineChanges(text: string, changes: readonly LineChange[]): LinesChanged {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const endsWithBreak = text.endsWith('\n');
  const lines = text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/);
  const ids = changes.some((c) => c.line_id ?? c.start_line_id ?? c.end_line_id)
    ? idIndex(lines)
    : undefined;
  const ranges = changes.map((c, i) => rangeOf(c, i, lines.length, ids));
  const order = ranges.map((_, i) => i).sort((a, b) => ranges[b]![0] - ranges[a]![0]);
  for (let k = 1; k < order.length; k++) {
    const lower = ranges[order[k - 1]!]!;
    const upper = ranges[order[k]!]!;
    if (upper[1] >= lower[0]) {
      throw DirigentError.fatal(
        ErrorCode.INVALID_PARAMS,
        `changes[${order[k]}] (lines ${upper[0]}-${upper[1]}) overlaps changes[${order[k - 1]}] (lines ${lower[0]}-${lower[1]})`,
        { hint: 'Merge overlapping changes into one, or give each its own lines.' },
      );
    }
  }
  let linesChanged = 0;
  for (const i of order) {
    const [start, end] = ranges[i]!;
    const content = changes[i]!.new_content.replace(/\r?\n$/, '');
    const added = changes[i]!.new_content === '' ? [] : content.split(/\r?\n/);
    linesChanged += Math.max(end - start + 1, added.length);
    lines.splice(start - 1, end - start + 1, ...added);
  }
  const body = lines.join(eol);
  return {
    text: body + (endsWithBreak && lines.length > 0 ? eol : ''),
    changesApplied: changes.length,
    linesChanged,
  };
}

function idIndex(lines: readonly string[]): Map<string, number[]> {
  const index = new Map<string, number[]>();
  lines.forEach((content, i) => {
    const id = lineId(i + 1, content);
    index.set(id, [...(index.get(id) ?? []), i + 1]);
  });
  return index;
}

/** The 1-based inclusive range of change `i` (end = start - 1 for an insertion). */
function rangeOf(
  c: LineChange,
  i: number,
  total: number,
  ids: Map<string, number[]> | undefined,
): [number, number] {
  const byId = (id: string, field: string): number => {
    const found = ids!.get(id) ?? [];
    if (found.length === 1) return found[0]!;
    throw DirigentError.fatal(
      ErrorCode.STALE_LINE_ID,
      found.length === 0
        ? `changes[${i}].${field} "${id}" names no line of the file as it is now: it changed since it was read`
        : `changes[${i}].${field} "${id}" names ${found.length} lines (${found.join(', ')})`,
      {
        hint: `Read the file again for current line ids, or give changes[${i}] start_line and end_line.`,
      },
    );
  };
  const start =
    c.start_line ??
    (c.line_id !== undefined
      ? byId(c.line_id, 'line_id')
      : c.start_line_id !== undefined
        ? byId(c.start_line_id, 'start_line_id')
        : undefined);
  if (start === undefined) {
    throw DirigentError.fatal(ErrorCode.INVALID_PARAMS, `changes[${i}] says no line`, {
      hint: `Give changes[${i}] start_line (and end_line), or RYE's line_id or start_line_id and end_line_id.`,
    });
  }
  const end =
    c.end_line ?? (c.end_line_id !== undefined ? byId(c.end_line_id, 'end_line_id') : start);
  if (start < 1 || start > total + 1 || end < start - 1 || end > total) {
    throw DirigentError.fatal(
      ErrorCode.LINE_OUT_OF_RANGE,
      `changes[${i}] names lines ${start}-${end}, but the file has ${total} lines`,
      {
        hint: `Set changes[${i}].start_line from 1 to ${total + 1} and end_line from start_line - 1 to ${total}.`,
        details: { total_lines: total },
      },
    );
  }
  return [start, end];
}
