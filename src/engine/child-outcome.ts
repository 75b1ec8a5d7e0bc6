import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { LinkedRun } from './linked-run.js';
import type { RunRecord } from './run-record.js';

/**
 * What a child directive gives the step that started it, once it ends: its outputs, or a
 * `CHILD_FAILED` error carrying the child's own error. `child` is a live run, or the record of
 * one that ended while its parent was not live.
 */
export async function childOutcome(child: LinkedRun | RunRecord): Promise<unknown> {
  const record = 'finished' in child ? await child.finished() : child;
  if (record.status === 'completed') return record.outputs;
  throw childError(record);
}

function childError(record: RunRecord): DirigentError {
  const inner = record.error;
  return DirigentError.fatal(
    ErrorCode.CHILD_FAILED,
    `Child directive "${record.directive}" ${record.status}${inner ? `: ${inner.message} [${inner.code}]` : ''}.`,
    {
      details: { childRunId: record.runId, error: inner },
    },
  );
}
