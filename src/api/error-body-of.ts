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
      code: e.code,
      message: e.message,
      ...(e.hint !== undefined && { hint: e.hint }),
      ...(Object.keys(details).length > 0 && { details }),
    },
  };
}
