import type { DirigentError } from '../errors/dirigent-error.js';

/** The one JSON shape of every error response. */
export interface ErrorBody {
  error: { code: string; message: string; hint?: string; details?: Record<string, unknown> };
}

/** The body of an error response (see {@link ErrorBody}); the error's location goes in details. */
export function errorBodyOf(e: DirigentError): ErrorBody {
  const details = { ...e.details, ...(e.location && { location: e.location }) };
  return {
    error: {
      // As sent: a code of a newer worker's error this version does not know goes out unchanged.
      code: e.sentCode,
      message: e.message,
      ...(e.hint !== undefined && { hint: e.hint }),
      ...(Object.keys(details).length > 0 && { details }),
    },
  };
}
