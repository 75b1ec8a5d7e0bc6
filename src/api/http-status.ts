/**
 * The one place where the HTTP API turns an error code into a status. Every error a route
 * answers with goes through {@link httpStatusOf}; the codes themselves are the engine's
 * (`errors/error-codes.ts`), so a client reads the same code the CLI prints.
 */
import { ErrorCode } from '../errors/error-codes.js';

const STATUS: Readonly<Record<string, number>> = {
  // The request itself is malformed.
  [ErrorCode.INVALID_REQUEST]: 400,
  [ErrorCode.INVALID_ITEM_ID]: 400,
  [ErrorCode.INVALID_QUERY]: 400,
  [ErrorCode.UNAUTHORIZED]: 401,
  // The request is understood but not allowed: a face without full access, a read-only space.
  [ErrorCode.PERMISSION_DENIED]: 403,
  [ErrorCode.SPACE_READ_ONLY]: 403,
  // What the request names does not exist.
  [ErrorCode.NOT_FOUND]: 404,
  [ErrorCode.RUN_NOT_FOUND]: 404,
  [ErrorCode.UNKNOWN_BATCH]: 404,
  [ErrorCode.UNKNOWN_SCHEDULE]: 404,
  [ErrorCode.UNKNOWN_DIRECTIVE]: 404,
  [ErrorCode.UNKNOWN_TOOL]: 404,
  [ErrorCode.UNKNOWN_KNOWLEDGE]: 404,
  // The request is well formed but clashes with the state of a run or of a key.
  [ErrorCode.IDEMPOTENCY_CONFLICT]: 409,
  [ErrorCode.RUN_NOT_WAITING]: 409,
  [ErrorCode.RUN_ENDED]: 409,
  [ErrorCode.RUN_NOT_REDRIVABLE]: 409,
  [ErrorCode.RUN_NOT_ENDED]: 409,
  [ErrorCode.UNKNOWN_SIGNAL]: 409,
  [ErrorCode.RUN_CONFLICT]: 409,
  [ErrorCode.ITEM_EXISTS]: 409,
  // Too much data.
  [ErrorCode.PAYLOAD_TOO_LARGE]: 413,
  [ErrorCode.INPUT_TOO_LARGE]: 413,
  [ErrorCode.UNSUPPORTED_MEDIA_TYPE]: 415,
  [ErrorCode.RATE_LIMITED]: 429,
  // The server cannot serve runs now; trying again later may succeed.
  [ErrorCode.REDIS_UNAVAILABLE]: 503,
  [ErrorCode.NOT_READY]: 503,
  [ErrorCode.LOCK_UNAVAILABLE]: 503,
  [ErrorCode.INTERNAL]: 500,
};

/**
 * The HTTP status of an error code. Codes not listed above are the directive's or the inputs'
 * own problems (`INVALID_INPUTS`, a signal's `INVALID_PAYLOAD`, a directive that does not parse
 * or validate, a signature that does not verify, `DIRECTIVE_MISMATCH`…): the request was understood but cannot be carried
 * out as it stands, so 422. Only `INTERNAL` is a 500.
 */
export function httpStatusOf(code: string): number {
  return STATUS[code] ?? 422;
}
