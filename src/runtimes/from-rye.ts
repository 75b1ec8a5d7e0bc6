import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/**
 * A tool's result read as RYE's result dict: `{"success": false, "error": …, "retryable": …}` is
 * a `TOOL_FAILED` failure (retryable when the dict says so); anything else is returned unchanged.
 *
 * @param label - How messages name the tool (`python tool rye/x`).
 */
export function fromRye(label: string, value: unknown): unknown {
  if (
    value !== null &&
    typeof value === 'object' &&
    (value as { success?: unknown }).success === false
  ) {
    const v = value as { error?: unknown; retryable?: unknown };
    throw new DirigentError(
      ErrorCode.TOOL_FAILED,
      `${label} failed: ${String(v.error ?? 'no error message')}`,
      { retryable: v.retryable === true, details: { result: value } },
    );
  }
  return value;
}
