import { SYNTAX_KEYWORD } from '../values/syntax.js';

/**
 * The parameters `dirigent/http/fetch` and `dirigent/web/fetch` share, as JSON Schema: the URL
 * (a value written into it is URL-encoded for its part), the deadline of the whole exchange and
 * the redirects followed.
 */
export const FETCH_PARAMS = {
  url: {
    type: 'string',
    minLength: 1,
    [SYNTAX_KEYWORD]: 'url',
    description: 'http:// or https:// URL.',
  },
  timeout: {
    type: 'number',
    exclusiveMinimum: 0,
    maximum: 600,
    default: 30,
    description: 'Seconds.',
  },
  max_redirects: { type: 'integer', minimum: 0, maximum: 20, default: 5 },
} as const;
