/**
 * The JSON schemas of what filters runs, shared by the routes that list, count and act on them
 * (`GET /v1/runs`, `GET /v1/runs/counts`, `POST /v1/runs/bulk`).
 */
import { RUN_STATUSES } from '../engine/run-record.js';

/** A run status. */
export const STATUS = { type: 'string', enum: [...RUN_STATUSES] } as const;

/** A directive's item id. */
export const DIRECTIVE = { type: 'string', minLength: 1, maxLength: 512 } as const;

/** A time as a query or a body gives it. */
const TIME = { type: 'string', maxLength: 40 } as const;

/** Runs started at or after. */
export const SINCE = { ...TIME, description: 'Runs started at or after: ISO 8601 or epoch ms.' };

/** Runs started at or before. */
export const UNTIL = { ...TIME, description: 'Runs started at or before: ISO 8601 or epoch ms.' };

/** `?tag=name:value`, repeatable. */
export const TAG_QUERY = {
  type: 'array',
  items: { type: 'string', minLength: 3, maxLength: 320 },
  maxItems: 32,
  description: 'Only runs with this tag, written name:value; repeat it for every one of several.',
} as const;

/** Tags in a body: name → value. */
export const TAGS = {
  type: 'object',
  additionalProperties: { type: 'string' },
  description: 'Only runs with every one of these tags (name → value).',
} as const;
