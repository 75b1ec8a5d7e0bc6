/**
 * A time option of the command line (`--since`, `--until`): an ISO 8601 date, epoch milliseconds,
 * or a duration back from now (`24h`, `7d`, `30m`).
 */
import { parseTime } from '../api/parse-time.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { parseDuration } from '../policy/duration.js';

/** A duration written with its unit: a bare number is epoch ms, not seconds ago. */
const AGO = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*[smhdw]\s*$/;

/**
 * The epoch ms `value` names (see the module comment); `INVALID_REQUEST` naming `option`, with
 * every form it takes, otherwise.
 */
export function parseTimeOption(value: string, option: string, now = Date.now()): number {
  if (AGO.test(value)) return now - parseDuration(value)! * 1000;
  try {
    return parseTime(value, option);
  } catch {
    throw DirigentError.fatal(
      ErrorCode.INVALID_REQUEST,
      `${option} must be a time: an ISO 8601 date, epoch milliseconds, or a duration ago; not "${value.slice(0, 64)}".`,
      {
        hint: `Write ${option} 2025-01-31T12:00:00Z, ${option} 1738324800000 or ${option} 24h (also 30m, 7d).`,
        details: { option },
      },
    );
  }
}
