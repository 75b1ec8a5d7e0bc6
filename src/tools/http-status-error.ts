/** A web tool's error for an HTTP status that says the request failed. */
import { DirigentError, ErrorCode } from '../errors/index.js';

/** Statuses below 500 after which a retry may still succeed. */
const RETRYABLE = new Set([408, 425, 429]);

/**
 * `HTTP_FAILED` for a response with status `status` (400 or more): retryable for 408, 425, 429
 * and 5xx (the server may recover), fatal otherwise (the request itself is wrong). The message and
 * `details` hold the start of the body.
 */
export function httpStatusError(
  label: string,
  url: string,
  status: number,
  statusText: string,
  text: string,
): DirigentError {
  const retryable = status >= 500 || RETRYABLE.has(status);
  const start = text.length > 1000 ? `${text.slice(0, 1000)}…` : text;
  return new DirigentError(
    ErrorCode.HTTP_FAILED,
    `${label}: ${url} answered ${status} ${statusText}${start ? `: ${start}` : ''}`,
    {
      retryable,
      hint: retryable
        ? 'The server may recover; the step retries per its policy.'
        : 'Check url, the method, headers and body of the request.',
      details: { status, body: start },
    },
  );
}
