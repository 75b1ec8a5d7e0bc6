/** The HTTP API (`dirigent serve`): a face on the operations. */
export { buildApi, DEFAULT_RATE_LIMIT, type ApiOptions } from './build-api.js';
export { BearerAuth } from './bearer-auth.js';
export { readApiTokens } from './read-api-tokens.js';
export { httpStatusOf } from './http-status.js';
export type { ErrorBody } from './error-body-of.js';
