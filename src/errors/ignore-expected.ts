/**
 * The failures a caller expects and may drop, and only those: a path that is not there (looked
 * for when it may be gone), an item no space holds. Every other failure is rethrown, so a
 * `.catch(ignoreMissing)` never hides a permission problem or a broken disk.
 */
import { isDirigentError } from './dirigent-error.js';
import type { ErrorCode } from './error-codes.js';

/**
 * Whether `err` says that a path does not exist: `ENOENT`, or `ENOTDIR` (a file stands where the
 * path needs a folder).
 */
export function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * For `.catch(ignoreMissing)` on a file operation: `undefined` when the path does not exist (it
 * was never there, or is gone already), and any other failure rethrown.
 */
export function ignoreMissing(err: unknown): undefined {
  if (isMissing(err)) return undefined;
  throw err;
}

/**
 * For `.catch(ignoreCode(ErrorCode.UNKNOWN_TOOL))`: `undefined` when the failure is a
 * DirigentError with `code` (the one the caller expects), and any other failure rethrown.
 */
export function ignoreCode(code: ErrorCode): (err: unknown) => undefined {
  return (err) => {
    if (isDirigentError(err, code)) return undefined;
    throw err;
  };
}
