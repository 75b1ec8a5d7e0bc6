/**
 * Errors of a request as its face receives it: an option or setting with a value it does not
 * take, a route that does not exist, a request without a valid bearer token. The CLI, the HTTP
 * API and the MCP server build them alike.
 */
import { DirigentError } from './dirigent-error.js';
import { ErrorCode } from './error-codes.js';

/**
 * `INVALID_REQUEST`: `option` (`--concurrency`, `DIRIGENT_METRICS_PORT`) takes `takes` (`a whole
 * number of at least 1`), not `got`.
 */
export function badOptionValue(
  option: string,
  takes: string,
  got: string,
  hint?: string,
): DirigentError {
  return DirigentError.fatal(ErrorCode.INVALID_REQUEST, `${option} takes ${takes} (got ${got}).`, {
    ...(hint !== undefined && { hint }),
    details: { option, got },
  });
}

/** `NOT_FOUND`: no route `route` (`GET /v2/x`, `/other`); `hint` says where the routes are. */
export function noRoute(route: string, hint: string): DirigentError {
  return DirigentError.fatal(ErrorCode.NOT_FOUND, `No route ${route.slice(0, 200)}.`, { hint });
}

/**
 * `UNAUTHORIZED`: the request has no bearer token (`tokenSent` false), or one the server does not
 * accept.
 */
export function unauthorized(tokenSent: boolean): DirigentError {
  return DirigentError.fatal(
    ErrorCode.UNAUTHORIZED,
    tokenSent
      ? 'The bearer token is not one this server accepts.'
      : 'This server needs a bearer token.',
    {
      hint: 'Send Authorization: Bearer <token>, a token of DIRIGENT_API_TOKENS or --tokens-file.',
    },
  );
}
