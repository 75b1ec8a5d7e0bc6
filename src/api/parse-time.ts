import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/**
 * A time a client gives as an ISO 8601 date (`2025-01-31`, `2025-01-31T12:00:00Z`) or as epoch
 * milliseconds (`1738324800000`), in epoch ms; `INVALID_REQUEST` naming `parameter` otherwise.
 */
export function parseTime(value: string, parameter: string): number {
  const ms = /^\d{1,15}$/.test(value)
    ? Number(value)
    : /^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)
      ? Date.parse(value)
      : NaN;
  if (Number.isFinite(ms)) return ms;
  throw DirigentError.fatal(
    ErrorCode.INVALID_REQUEST,
    `${parameter} must be an ISO 8601 date or epoch milliseconds, not "${value.slice(0, 64)}".`,
    {
      hint: `Write ${parameter}=2025-01-31T12:00:00Z or ${parameter}=1738324800000.`,
      details: { parameter },
    },
  );
}
