import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/**
 * The error of a tool call lost with the worker running it (it died, or was cut off from Redis
 * for longer than its lease): retryable, so the step is retried under its policy, and the lost
 * call counts as an attempt.
 */
export function workerLost(
  call: { itemId: string; step: string },
  workerId: string,
): DirigentError {
  return DirigentError.retryable(
    ErrorCode.WORKER_LOST,
    `Tool ${call.itemId} of step "${call.step}" was lost with the worker running it (${workerId}): the worker died, or was cut off from Redis for longer than its lease, before the call ended.`,
    {
      hint: `The step is retried under its retry policy, and the lost call counts as an attempt: give the step <retry attempts="…"/> if it needs more. The tool may have run in part before the worker was lost: make its side effects idempotent.`,
      details: { workerId, tool: call.itemId, step: call.step },
    },
  );
}
