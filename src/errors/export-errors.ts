/**
 * Errors of an export of ended runs (`dirigent runs export`, `Dirigent.exportRuns`): a file that
 * cannot be written or is not an export, and a filter that asks for runs an export never writes.
 */
import { DirigentError } from './dirigent-error.js';
import { ErrorCode } from './error-codes.js';
import { fileNotFound, notAFile } from './file-errors.js';

/**
 * The error of an export file that could not be opened or written: `given` as the caller wrote
 * it, `path` resolved, `err` the system's error. `IS_A_DIRECTORY` for a folder, `FILE_NOT_FOUND`
 * when its folder does not exist, else `FILE_NOT_WRITABLE`.
 */
export function cannotWriteExport(given: string, path: string, err: unknown): DirigentError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EISDIR')
    return notAFile(given, { path, hint: 'Give --out a file name, e.g. --out runs.jsonl.' });
  if (code === 'ENOENT' || code === 'ENOTDIR')
    return fileNotFound(`The folder of "${given}"`, {
      path,
      cause: err,
      hint: 'Create the folder first, or write the export somewhere that exists.',
    });
  const reason = err instanceof Error ? err.message : String(err);
  return DirigentError.fatal(
    ErrorCode.FILE_NOT_WRITABLE,
    `Cannot write the export to "${given}": ${reason}`,
    {
      cause: err,
      hint: 'Write it where you may write (your home, /tmp), or fix the permissions of the file and its folder.',
      details: { path, ...(code !== undefined && { errno: code }) },
    },
  );
}

/**
 * `INVALID_REQUEST`: the file an export would go on in holds, at `line`, something no export
 * wrote: appending runs to it would mix them into another file.
 */
export function notAnExport(given: string, path: string, line: number): DirigentError {
  return DirigentError.fatal(
    ErrorCode.INVALID_REQUEST,
    `"${given}" line ${line} is not a run an export wrote: an export goes on only in a file of its own.`,
    {
      hint: 'Give --out a new file, or the file an interrupted export was writing.',
      details: { path, line },
    },
  );
}

/** `INVALID_REQUEST`: an export writes ended runs only, and `status` is not an end. */
export function exportNeedsEnded(status: string): DirigentError {
  return DirigentError.fatal(
    ErrorCode.INVALID_REQUEST,
    `An export writes ended runs, and "${status}" is not an end: no run it matches would be written.`,
    {
      hint: 'Filter by completed, failed or cancelled, or leave --status out for every ended run.',
      details: { statuses: ['completed', 'failed', 'cancelled'] },
    },
  );
}
