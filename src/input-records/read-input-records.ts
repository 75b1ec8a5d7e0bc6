/**
 * Reads the inputs of a batch (`dirigent batch`): one record per line of a JSON Lines file, or per
 * row of a CSV file, streamed with backpressure so that memory stays flat however long the file.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { readCsvRecords } from './read-csv-records.js';
import type { InputRecord } from './input-record.js';
import { readJsonlRecords } from './read-jsonl-records.js';
import { fileNotFound } from '../errors/file-errors.js';

export type { InputRecord } from './input-record.js';

/** How {@link readInputRecords} reads. */
export interface ReadOptions {
  /** Default: from the file's extension (`.csv` → csv, else jsonl); jsonl for stdin and streams. */
  format?: 'jsonl' | 'csv';
  /**
   * CSV: header name → input name (`--map 'Full Name=name'`); columns not in the map keep their
   * header as the input name. A name the header does not have is an error (INVALID_INPUTS).
   */
  map?: Record<string, string>;
  /**
   * Skips the records whose line is this or lower, cheaply (resuming a batch): JSONL lines are not
   * even decoded; CSV records are cut but not parsed (the header is always read).
   */
  skipThrough?: number;
  /** Default 1 MiB: a longer line (CSV: record) is an error record (INPUT_TOO_LARGE), reading goes on. */
  maxLineBytes?: number;
}

/**
 * The records of an input file, with how far reading has got. Iterate it with `for await`; read
 * `bytesRead` and `totalBytes` at any time, e.g. for a progress bar's ETA:
 * `batchProgress({ bytes: () => ({ read: reader.bytesRead, total: reader.totalBytes }) })`.
 */
export interface InputRecordReader extends AsyncGenerator<InputRecord, void, undefined> {
  /**
   * Bytes of the input through the last record handed out (lines skipped and blank ones
   * included); once the reader is done, the input's whole size.
   */
  readonly bytesRead: number;
  /**
   * The file's size: undefined for stdin, a stream or anything that is not a regular file, and
   * until the first record is asked for (the file is opened then).
   */
  readonly totalBytes: number | undefined;
}

/** The longest line read by default: 1 MiB. */
export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;

/**
 * Streams the records of `source` (a file path, or `-` for stdin, or a readable stream), with
 * backpressure: the next chunk of the file is read only when the records of the last are used, so
 * memory stays flat however long the file. A line that cannot be read is an error record (see
 * {@link InputRecord}); the iteration itself rejects only when the input as a whole cannot be read:
 * a missing file (FILE_NOT_FOUND), a directory or an unreadable file (INVALID_REQUEST), a CSV header
 * that is no use (INVALID_INPUTS). Nothing is opened until the first record is asked for; stopping
 * early (`break`, `return()`) closes the file (and destroys a stream given).
 */
export function readInputRecords(
  source: string | NodeJS.ReadableStream,
  options: ReadOptions = {},
): InputRecordReader {
  const progress: { bytesRead: number; totalBytes: number | undefined } = {
    bytesRead: 0,
    totalBytes: undefined,
  };
  const onBytes = (offset: number) => {
    progress.bytesRead = offset;
  };
  async function* records(): AsyncGenerator<InputRecord, void, undefined> {
    const input = await openInput(source);
    progress.totalBytes = input.totalBytes;
    const format = options.format ?? (input.csv ? 'csv' : 'jsonl');
    const common = {
      file: input.name,
      maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
      skipThrough: options.skipThrough ?? 0,
      onBytes,
    };
    const chunks = readChunks(input.stream, input.name);
    if (format === 'csv') yield* readCsvRecords(chunks, { ...common, map: options.map ?? {} });
    else yield* readJsonlRecords(chunks, common);
  }
  const reader = records();
  return Object.defineProperties(reader, {
    bytesRead: { get: () => progress.bytesRead, enumerable: true },
    totalBytes: { get: () => progress.totalBytes, enumerable: true },
  }) as InputRecordReader;
}

interface OpenInput {
  stream: NodeJS.ReadableStream;
  /** For error locations: the path, `<stdin>` or `<stream>`. */
  name: string;
  totalBytes: number | undefined;
  /** The name ends in `.csv`. */
  csv: boolean;
}

async function openInput(source: string | NodeJS.ReadableStream): Promise<OpenInput> {
  if (typeof source !== 'string') {
    return { stream: source, name: '<stream>', totalBytes: undefined, csv: false };
  }
  if (source === '-') {
    return { stream: process.stdin, name: '<stdin>', totalBytes: undefined, csv: false };
  }
  let info;
  try {
    info = await stat(source);
  } catch (err) {
    throw readFailure(source, err);
  }
  if (info.isDirectory()) {
    throw DirigentError.fatal(
      ErrorCode.INVALID_REQUEST,
      `${source} is a folder, not an input file`,
      {
        hint: 'name a .jsonl or .csv file, or - to read standard input',
        details: { path: source },
      },
    );
  }
  return {
    stream: createReadStream(source, { highWaterMark: 64 * 1024 }),
    name: source,
    totalBytes: info.isFile() ? info.size : undefined,
    csv: source.toLowerCase().endsWith('.csv'),
  };
}

/** The stream's chunks; a failure to read becomes a DirigentError naming the input. */
async function* readChunks(
  stream: NodeJS.ReadableStream,
  name: string,
): AsyncGenerator<Buffer | string> {
  try {
    for await (const chunk of stream) yield chunk;
  } catch (err) {
    throw readFailure(name, err);
  }
}

function readFailure(path: string, err: unknown): DirigentError {
  if (err instanceof DirigentError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') {
    return fileNotFound(`The inputs file ${path}`, {
      path,
      hint: 'Check the path, or pass - to read standard input.',
      cause: err,
    });
  }
  const why = err instanceof Error ? err.message : String(err);
  return DirigentError.fatal(ErrorCode.INVALID_REQUEST, `cannot read ${path}: ${why}`, {
    details: { path },
    cause: err,
  });
}
