import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/** What a run id may be: letters, digits, `_` and `-` (a UUID, or a caller's own). */
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** Refuses a run id no run can have (`INVALID_REQUEST`), before any store is asked. */
export function checkRunId(runId: string): void {
  if (RUN_ID.test(runId)) return;
  throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, `"${runId.slice(0, 80)}" is not a run id.`, {
    hint: 'Run ids are letters, digits, _ and -, up to 128 characters, as `start` returns them.',
  });
}
