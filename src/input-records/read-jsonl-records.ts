import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { InputRecord } from './input-record.js';
import { splitRecords } from './split-records.js';
import { tooLargeRecord } from './too-large-record.js';

/** What {@link readJsonlRecords} takes (see `ReadOptions` in read-input-records.ts). */
export interface JsonlReadOptions {
  /** The file's name in error locations. */
  file: string;
  maxLineBytes: number;
  skipThrough: number;
  /** Told the stream offset just past each record handed out, and at the end the stream's size. */
  onBytes: (offset: number) => void;
}

/**
 * Reads JSON Lines: every non-blank line is one JSON object, the inputs of one run. A line that is
 * not JSON, or is JSON but not an object, or is longer than the limit, comes out as an error record
 * and reading goes on. Lines up to `skipThrough` are skipped without being decoded or parsed.
 */
export async function* readJsonlRecords(
  chunks: AsyncIterable<Buffer | string>,
  options: JsonlReadOptions,
): AsyncGenerator<InputRecord> {
  const { file, maxLineBytes, onBytes } = options;
  const split = splitRecords(chunks, {
    csv: false,
    maxBytes: maxLineBytes,
    skipThrough: options.skipThrough,
    keepFirst: false,
  });
  try {
    for (;;) {
      const next = await split.next();
      if (next.done === true) {
        onBytes(next.value);
        return;
      }
      for (const raw of next.value) {
        onBytes(raw.endOffset);
        if (raw.tooLarge !== undefined) {
          yield {
            line: raw.line,
            error: tooLargeRecord(file, raw.line, raw.tooLarge, maxLineBytes),
          };
          continue;
        }
        const text = raw.buf.toString('utf8', raw.start, raw.end);
        const c = text.charCodeAt(0);
        // Whitespace only (JSON's own whitespace): blank.
        if ((c === 0x20 || c === 0x09) && text.trim() === '') continue;
        yield parseLine(file, raw.line, text);
      }
    }
  } finally {
    // Stopped early: close the splitter, and so the stream.
    await split.return(0);
  }
}

function parseLine(file: string, line: number, text: string): InputRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return {
      line,
      error: DirigentError.fatal(
        ErrorCode.INVALID_INPUTS,
        `line ${line} is not valid JSON: ${why}`,
        {
          location: { file, line, column: 1 },
          hint: 'write each input as one JSON object on a line of its own',
        },
      ),
    };
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return { line, inputs: value as Record<string, unknown> };
  }
  return {
    line,
    error: DirigentError.fatal(
      ErrorCode.INVALID_INPUTS,
      `line ${line} is ${describeJson(value)}, not a JSON object of inputs`,
      {
        location: { file, line, column: 1 },
        hint: 'write each input as an object naming its inputs, e.g. {"name": "Ada"}',
      },
    ),
  };
}

function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
