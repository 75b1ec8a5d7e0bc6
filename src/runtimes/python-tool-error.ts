import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/** An exception a Python tool raised, as the harness and the warm host report it. */
export interface PythonException {
  type: string;
  message: string;
  /** `TimeoutError`, `ConnectionError`, or an exception with a truthy `retryable` attribute. */
  retryable: boolean;
  /** The end of the formatted traceback. */
  traceback: string;
}

/**
 * The `TOOL_FAILED` error for an exception raised by a Python tool: retryable when the exception
 * says so, with its type, message and traceback (and the output captured, if any) in `details`.
 */
export function pythonToolError(
  label: string,
  e: PythonException,
  output: { stdout?: string; stderr?: string } = {},
): DirigentError {
  return new DirigentError(ErrorCode.TOOL_FAILED, `${label} raised ${e.type}: ${e.message}`, {
    retryable: e.retryable,
    details: { type: e.type, message: e.message, traceback: e.traceback, ...nonEmpty(output) },
  });
}

function nonEmpty(output: { stdout?: string; stderr?: string }): Record<string, string> {
  const out: Record<string, string> = {};
  if (output.stdout) out.stdout = output.stdout;
  if (output.stderr) out.stderr = output.stderr;
  return out;
}
