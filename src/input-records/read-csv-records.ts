import { parse, type Options as CsvOptions } from 'csv-parse/sync';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { InputRecord } from './input-record.js';
import { splitRecords, type RawRecord } from './split-records.js';
import { tooLargeRecord } from './too-large-record.js';

/** What {@link readCsvRecords} takes (see `ReadOptions` in read-input-records.ts). */
export interface CsvReadOptions {
  /** The file's name in error locations. */
  file: string;
  /** Header name → input name; other columns keep their header as the input name. */
  map: Record<string, string>;
  maxLineBytes: number;
  skipThrough: number;
  /** Told the stream offset just past each record handed out, and at the end the stream's size. */
  onBytes: (offset: number) => void;
}

// The records handed to the parser are whole ones (cut by splitRecords, which follows the same
// quoting rules), so the parser sees no blank line it should keep and no record split in two.
const PARSE: CsvOptions = {
  relax_column_count: true,
  skip_empty_lines: true,
  record_delimiter: ['\r\n', '\n'],
};

/**
 * Reads CSV: the first record is the header, each later record the inputs of one run, keyed by the
 * header's names (or the names `map` gives them), with string values; an empty field is left out.
 * A record with a different number of fields than the header, or that is not valid CSV, or is
 * longer than the limit, comes out as an error record and reading goes on. A header that names a
 * column twice, leaves one unnamed, or lacks a column `map` names stops the read (INVALID_INPUTS).
 *
 * The file is cut into records by {@link splitRecords} and each chunk's records are parsed by
 * csv-parse in one call. csv-parse's streaming parser is not used directly: after a record it
 * cannot parse (`skip_records_with_error`) it loses the rest of its chunk, and its own size limit
 * stops the read, where a batch must report the one bad record and go on.
 */
export async function* readCsvRecords(
  chunks: AsyncIterable<Buffer | string>,
  options: CsvReadOptions,
): AsyncGenerator<InputRecord> {
  const { file, maxLineBytes, onBytes } = options;
  const split = splitRecords(chunks, {
    csv: true,
    maxBytes: maxLineBytes,
    skipThrough: options.skipThrough,
    keepFirst: true,
  });
  let names: string[] | undefined;
  try {
    for (;;) {
      const next = await split.next();
      if (next.done === true) {
        if (names === undefined) checkMap(file, options.map, []);
        onBytes(next.value);
        return;
      }
      let raws = next.value;
      if (names === undefined) {
        const header = raws[0];
        if (header === undefined) continue;
        names = headerNames(file, header, options.map, maxLineBytes);
        onBytes(header.endOffset);
        raws = raws.slice(1);
      }
      const rows = parseRecords(raws);
      for (let i = 0; i < raws.length; i++) {
        const raw = raws[i] as RawRecord;
        onBytes(raw.endOffset);
        if (raw.tooLarge !== undefined) {
          yield {
            line: raw.line,
            error: tooLargeRecord(file, raw.line, raw.tooLarge, maxLineBytes),
          };
          continue;
        }
        const row = rows[i];
        yield row instanceof Error
          ? { line: raw.line, error: notCsv(file, raw.line, row) }
          : toRecord(file, raw.line, names, row ?? []);
      }
    }
  } finally {
    // Stopped early: close the splitter, and so the stream.
    await split.return(0);
  }
}

/**
 * Parses `raws` (a chunk's records) into rows, one per record, in as few parser calls as it can:
 * runs of records that lie next to each other in one buffer go in one call. A run whose call
 * fails, or gives back another number of rows, is parsed again record by record, so a bad record
 * gets its own error and spoils no other.
 */
function parseRecords(raws: RawRecord[]): (string[] | Error | undefined)[] {
  const rows: (string[] | Error | undefined)[] = new Array<undefined>(raws.length);
  let i = 0;
  while (i < raws.length) {
    const first = raws[i] as RawRecord;
    let j = i + 1;
    if (first.tooLarge === undefined) {
      while (j < raws.length && (raws[j] as RawRecord).buf === first.buf) j++;
    }
    if (first.tooLarge !== undefined) {
      // No row: the record's bytes were not kept.
    } else if (j - i === 1) {
      rows[i] = parseOne(first.buf.subarray(first.start, first.end));
    } else {
      const last = raws[j - 1] as RawRecord;
      let run: string[][] | undefined;
      try {
        run = parse(first.buf.subarray(first.start, last.end), PARSE);
      } catch {
        run = undefined;
      }
      for (let k = i; k < j; k++) {
        const raw = raws[k] as RawRecord;
        rows[k] =
          run !== undefined && run.length === j - i
            ? run[k - i]
            : parseOne(raw.buf.subarray(raw.start, raw.end));
      }
    }
    i = j;
  }
  return rows;
}

function parseOne(bytes: Buffer): string[] | Error {
  try {
    const rows = parse(bytes, PARSE);
    const row = rows[0];
    if (rows.length !== 1 || row === undefined) return new Error('it is not one record');
    return row;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

function headerNames(
  file: string,
  header: RawRecord,
  map: Record<string, string>,
  maxLineBytes: number,
): string[] {
  const at = { file, line: header.line, column: 1 };
  if (header.tooLarge !== undefined) {
    throw tooLargeRecord(file, header.line, header.tooLarge, maxLineBytes);
  }
  const row = parseOne(header.buf.subarray(header.start, header.end));
  if (row instanceof Error) {
    throw DirigentError.fatal(
      ErrorCode.INVALID_INPUTS,
      `the CSV header (line ${header.line}) is not valid CSV: ${csvMessage(row)}`,
      { location: at, hint: 'make the first line a comma-separated list of column names' },
    );
  }
  const columns = row.map((name) => name.trim());
  checkMap(file, map, columns);
  const names: string[] = [];
  const seen = new Map<string, number>();
  for (const [i, column] of columns.entries()) {
    if (column === '') {
      throw DirigentError.fatal(
        ErrorCode.INVALID_INPUTS,
        `column ${i + 1} of the CSV header (line ${header.line}) has no name`,
        { location: at, hint: 'name every column in the header line, or remove the empty one' },
      );
    }
    const name = Object.hasOwn(map, column) ? (map[column] as string) : column;
    const before = seen.get(name);
    if (before !== undefined) {
      const other = columns[before] as string;
      const message =
        other === column
          ? `the CSV header (line ${header.line}) names the column "${column}" twice (columns ${before + 1} and ${i + 1})`
          : `the CSV columns "${other}" and "${column}" both give the input "${name}"`;
      throw DirigentError.fatal(ErrorCode.INVALID_INPUTS, message, {
        location: at,
        hint: `rename one of the columns in the header, or give one another input name with --map '${column}=<input name>'`,
        details: { column: name, columns: [before + 1, i + 1] },
      });
    }
    seen.set(name, i);
    names.push(name);
  }
  return names;
}

/** A map naming a column the header does not have is a mistake: say so before any run starts. */
function checkMap(file: string, map: Record<string, string>, columns: string[]): void {
  const have = new Set(columns);
  for (const column of Object.keys(map)) {
    if (!have.has(column)) {
      throw DirigentError.fatal(
        ErrorCode.INVALID_INPUTS,
        `the column map names "${column}", which the CSV header does not have`,
        {
          location: { file, line: 1, column: 1 },
          hint:
            columns.length > 0
              ? `the header's columns are: ${columns.join(', ')}`
              : 'the file has no header line',
        },
      );
    }
  }
}

function toRecord(file: string, line: number, names: string[], row: string[]): InputRecord {
  if (row.length !== names.length) {
    return {
      line,
      error: DirigentError.fatal(
        ErrorCode.INVALID_INPUTS,
        `line ${line} has ${row.length} ${row.length === 1 ? 'field' : 'fields'}, the CSV header has ${names.length}`,
        {
          location: { file, line, column: 1 },
          hint: 'give every row one field per column, and quote fields that contain commas',
          details: { fields: row.length, columns: names.length },
        },
      ),
    };
  }
  const entries: [string, string][] = [];
  for (let i = 0; i < row.length; i++) {
    const value = row[i] as string;
    if (value !== '') entries.push([names[i] as string, value]);
  }
  // fromEntries defines own properties: a column named __proto__ is an input like any other.
  return { line, inputs: Object.fromEntries(entries) };
}

function notCsv(file: string, line: number, err: Error): DirigentError {
  return DirigentError.fatal(
    ErrorCode.INVALID_INPUTS,
    `line ${line} is not valid CSV: ${csvMessage(err)}`,
    {
      location: { file, line, column: 1 },
      hint: 'quote a field that contains quotes, and write each quote in it twice ("say ""hi""")',
    },
  );
}

/** csv-parse's message, less its own line number (that of the record alone, always 1). */
function csvMessage(err: Error): string {
  return err.message.replace(/ at line \d+/, '');
}
