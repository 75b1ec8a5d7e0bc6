/**
 * The byte level of reading a batch's input file: cuts a stream of chunks into records (lines for
 * JSONL, quote-aware records for CSV), counting lines, without decoding a byte of a record the
 * reader skips. Memory is bounded by one chunk plus `maxBytes`: a record growing past the limit is
 * dropped as it streams by and only its size is kept.
 */

/** One record cut from the stream: its bytes are `buf[start, end)`, line terminator excluded. */
export interface RawRecord {
  /** 1-based line on which the record starts. */
  line: number;
  buf: Buffer;
  start: number;
  end: number;
  /** Set when the record is longer than the limit: its size in bytes (then `buf` is empty). */
  tooLarge?: number;
  /** Offset in the stream just past the record and its line terminator. */
  endOffset: number;
}

/** What {@link splitRecords} takes. */
export interface SplitOptions {
  /** CSV: a newline inside a quoted field does not end the record. */
  csv: boolean;
  /** A longer record comes out as a `tooLarge` one. */
  maxBytes: number;
  /** Records starting on this line or earlier are dropped unread. */
  skipThrough: number;
  /** Never drop the first non-blank record (a CSV header) by `skipThrough`. */
  keepFirst: boolean;
}

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const COMMA = 0x2c;

// CSV scanner states (RFC 4180): at the start of a field, in an unquoted field, in a quoted field,
// and just after a quote inside a quoted field (the field's end, or the first of a doubled quote).
const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
const QUOTE_SEEN = 3;

/**
 * Cuts `chunks` into records and yields them a chunk's worth at a time (an array per chunk read,
 * never empty), so the caller pulls the next chunk only when it has used the records of the last:
 * the stream's backpressure holds. Blank lines (empty, or a lone `\r`) are dropped but counted; a
 * trailing `\r` is cut off each record; a UTF-8 byte order mark at the start is skipped.
 */
export async function* splitRecords(
  chunks: AsyncIterable<Buffer | string>,
  options: SplitOptions,
): AsyncGenerator<RawRecord[], number> {
  const { csv, maxBytes, skipThrough } = options;
  let keepFirst = options.keepFirst;
  let line = 1; // the line at the scan position
  let recordLine = 1; // the line on which the record in progress starts
  let offset = 0; // the stream offset of buf[0]
  let pending: Buffer[] = []; // the record in progress's bytes from earlier chunks
  let pendingBytes = 0;
  let overflow = false; // the record in progress is too large: its bytes are counted, not kept
  let state = FIELD_START;
  let out: RawRecord[] = [];

  const emit = (buf: Buffer, start: number, end: number, terminated: boolean) => {
    const size = pendingBytes + (end - start);
    const at = recordLine;
    const endOffset = offset + end + (terminated ? 1 : 0);
    const skip = at <= skipThrough && !keepFirst;
    if (skip) {
      // Skipped unread (a batch resuming).
    } else if (overflow || size > maxBytes) {
      keepFirst = false;
      out.push({ line: at, buf: EMPTY, start: 0, end: 0, tooLarge: size, endOffset });
    } else {
      let b = buf;
      let s = start;
      let e = end;
      if (pendingBytes > 0) {
        pending.push(buf.subarray(start, end));
        b = Buffer.concat(pending, size);
        s = 0;
        e = size;
      }
      if (e > s && b[e - 1] === CR) e--;
      if (e > s) {
        keepFirst = false;
        out.push({ line: at, buf: b, start: s, end: e, endOffset });
      }
    }
    if (pendingBytes > 0) pending = [];
    pendingBytes = 0;
    overflow = false;
  };

  const scan = (buf: Buffer) => {
    let start = 0;
    if (!csv) {
      let nl = buf.indexOf(LF, 0);
      while (nl !== -1) {
        emit(buf, start, nl, true);
        line++;
        recordLine = line;
        start = nl + 1;
        nl = buf.indexOf(LF, start);
      }
    } else {
      const n = buf.length;
      for (let i = 0; i < n; i++) {
        const c = buf[i];
        if (state === QUOTED) {
          if (c === QUOTE) state = QUOTE_SEEN;
          else if (c === LF) line++;
        } else if (c === LF) {
          emit(buf, start, i, true);
          line++;
          recordLine = line;
          start = i + 1;
          state = FIELD_START;
        } else if (c === COMMA) {
          state = FIELD_START;
        } else if (state === FIELD_START) {
          state = c === QUOTE ? QUOTED : UNQUOTED;
        } else if (state === QUOTE_SEEN) {
          // A doubled quote goes on with the quoted field; anything else after a closing quote is
          // malformed, and the CSV parser says so for this record alone.
          state = c === QUOTE ? QUOTED : c === CR ? QUOTE_SEEN : UNQUOTED;
        }
      }
    }
    const rest = buf.length - start;
    if (rest > 0) {
      if (!overflow && pendingBytes + rest > maxBytes) {
        overflow = true;
        pending = [];
      }
      if (!overflow) pending.push(start === 0 ? buf : buf.subarray(start));
      pendingBytes += rest;
    }
    offset += buf.length;
  };

  // The first bytes wait until there are three of them, to tell a byte order mark.
  let head: Buffer | undefined = EMPTY;
  for await (const chunk of chunks) {
    let buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    if (head !== undefined) {
      buf = head.length > 0 ? Buffer.concat([head, buf]) : buf;
      if (buf.length < 3 && BOM.subarray(0, buf.length).equals(buf)) {
        head = buf;
        continue;
      }
      head = undefined;
      if (buf.subarray(0, 3).equals(BOM)) {
        buf = buf.subarray(3);
        offset += 3;
      }
    }
    scan(buf);
    if (out.length > 0) {
      yield out;
      out = [];
    }
  }
  if (head !== undefined) scan(head);
  if (pendingBytes > 0 || overflow) emit(EMPTY, 0, 0, false);
  if (out.length > 0) yield out;
  return offset;
}

const EMPTY = Buffer.alloc(0);
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
