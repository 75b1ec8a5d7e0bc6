/** The error of an HTTP status that says a request failed: the web tools' and the http primitive's. */
import { DirigentError, ErrorCode } from '../errors/index.js';

/** Statuses below 500 after which a retry may still succeed. */
const RETRYABLE = new Set([408, 425, 429]);

/** Characters of a failing response's body kept in the error. */
const BODY_CHARS = 1000;

/** Whether a request that got `status` (400 or more) may succeed when made again. */
export function retryableStatus(status: number): boolean {
  return status >= 500 || RETRYABLE.has(status);
}

/**
 * `HTTP_FAILED` for a response to `target` (what was requested, as the message shows it) with
 * status `status` (400 or more): retryable for 408, 425, 429 and 5xx (the server may recover),
 * fatal otherwise (the request itself is wrong, and `fatalHint` says what to check). The message
 * holds the start of the body, and so do `details` unless the caller gives its own.
 */
export function httpStatusError(
  label: string,
  target: string,
  status: number,
  statusText: string,
  text: string,
  options: { fatalHint?: string; details?: Record<string, unknown> } = {},
): DirigentError {
  const retryable = retryableStatus(status);
  const start = text.length > BODY_CHARS ? `${text.slice(0, BODY_CHARS)}…` : text;
  return new DirigentError(
    ErrorCode.HTTP_FAILED,
    `${label}: ${target} answered ${status} ${statusText}${start ? `: ${start}` : ''}`,
    {
      retryable,
      hint: retryable
        ? 'The server may recover; the step retries per its policy.'
        : (options.fatalHint ?? 'Check url, the method, headers and body of the request.'),
      details: options.details ?? { status, body: start },
    },
  );
}
