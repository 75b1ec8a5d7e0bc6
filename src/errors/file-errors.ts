/**
 * Errors about files and folders a caller names: one that does not exist or cannot be read, a
 * folder where a file is needed (or the other way round), a binary or oversized file where text
 * is needed. The built-in file tools, the inputs of a batch and the CLI's file options share them.
 */
import { DirigentError } from './dirigent-error.js';
import { ErrorCode } from './error-codes.js';

/** What a file error says besides its subject. */
export interface FileErrorOptions {
  /** The path as resolved (absolute), for `details.path`; the message names it as given. */
  path?: string;
  /** How to fix it. */
  hint?: string;
  /** More facts. */
  details?: Record<string, unknown>;
  cause?: unknown;
}

function fileError(
  code: ErrorCode,
  message: string,
  options: FileErrorOptions,
  details: Record<string, unknown> = {},
): DirigentError {
  return DirigentError.fatal(code, message, {
    ...(options.hint !== undefined && { hint: options.hint }),
    ...(options.cause !== undefined && { cause: options.cause }),
    details: {
      ...(options.path !== undefined && { path: options.path }),
      ...details,
      ...options.details,
    },
  });
}

/**
 * `FILE_NOT_FOUND`: `what` (`file "a.txt"`, `input file in.jsonl`, `the folder of "a/b.txt"`)
 * does not exist; `why`, when given, says more (`it is a link to nothing`).
 */
export function fileNotFound(
  what: string,
  options: FileErrorOptions & { why?: string } = {},
): DirigentError {
  const why = options.why === undefined ? '' : ` (${options.why})`;
  return fileError(ErrorCode.FILE_NOT_FOUND, `${what} does not exist${why}.`, options);
}

/**
 * `FILE_NOT_FOUND`: `file` (`what` it is, when the message should say: `directive file`, `MCP
 * file`) exists perhaps, but cannot be read: `err` says why.
 */
export function cannotRead(
  file: string,
  err: unknown,
  options: FileErrorOptions & { what?: string } = {},
): DirigentError {
  const what = options.what === undefined ? '' : `${options.what} `;
  const reason = err instanceof Error ? err.message : String(err);
  return fileError(ErrorCode.FILE_NOT_FOUND, `Cannot read ${what}${file}: ${reason}`, {
    path: file,
    cause: err,
    ...options,
  });
}

/** `IS_A_DIRECTORY`: `given` (as the caller wrote it) is a folder where a file is needed. */
export function notAFile(given: string, options: FileErrorOptions = {}): DirigentError {
  return fileError(ErrorCode.IS_A_DIRECTORY, `"${given}" is a folder, not a file.`, options);
}

/** `NOT_A_DIRECTORY`: `given` (as the caller wrote it) is a file where a folder is needed. */
export function notAFolder(given: string, options: FileErrorOptions = {}): DirigentError {
  return fileError(ErrorCode.NOT_A_DIRECTORY, `"${given}" is a file, not a folder.`, options);
}

/**
 * `BINARY_FILE`: `given` holds NUL bytes where text is needed; `why` says what needs text
 * (`edits change text`).
 */
export function binaryFile(
  given: string,
  why: string,
  options: FileErrorOptions = {},
): DirigentError {
  return fileError(
    ErrorCode.BINARY_FILE,
    `"${given}" is a binary file (it holds NUL bytes); ${why}.`,
    options,
  );
}

/**
 * `FILE_TOO_LARGE`: `given` has `size` bytes, more than `limit`; `what` says what takes files
 * up to `limit` (`a text read`, `an edit`).
 */
export function fileTooLarge(
  given: string,
  size: number,
  limit: number,
  what: string,
  options: FileErrorOptions = {},
): DirigentError {
  return fileError(
    ErrorCode.FILE_TOO_LARGE,
    `"${given}" has ${size} bytes, more than ${what} takes (${limit}).`,
    options,
    { size, limit },
  );
}
