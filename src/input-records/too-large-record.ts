import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/** The error of an input line (or CSV record) longer than the reader's limit. */
export function tooLargeRecord(
  file: string,
  line: number,
  bytes: number,
  maxBytes: number,
): DirigentError {
  return DirigentError.fatal(
    ErrorCode.INPUT_TOO_LARGE,
    `line ${line} is ${bytes.toLocaleString('en-US')} bytes, more than the limit of ${maxBytes.toLocaleString('en-US')}`,
    {
      location: { file, line, column: 1 },
      hint: 'shorten the line, or raise the limit on the size of a line',
      details: { line, bytes, maxBytes },
    },
  );
}
