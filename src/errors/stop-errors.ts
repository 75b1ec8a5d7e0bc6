/**
 * Errors of work stopped before it ended: cancelled (by a person, a closing pool, a run let go),
 * or past its time. A tool runtime, the engine and the workers all stop work; they say so alike.
 */
import type { SourceLocation } from './source-location.js';
import { DirigentError } from './dirigent-error.js';
import { ErrorCode } from './error-codes.js';

/**
 * `CANCELLED` (fatal): `what` was stopped before it ended, `why` (when known) saying by whom or
 * what: `cancelled('Step "deploy"')`, `cancelled('python tool a/b', 'the Python host pool is
 * closed')`. `cause` is the abort reason, when it was not a DirigentError of its own.
 */
export function cancelled(what: string, why?: string, cause?: unknown): DirigentError {
  return DirigentError.fatal(
    ErrorCode.CANCELLED,
    `${what} was cancelled${why === undefined ? '' : `: ${why}`}.`,
    cause === undefined ? {} : { cause },
  );
}

/**
 * `CANCELLED`: what run `runId` still had under way in this process, which let the run go (`why`:
 * it parked it, lost it, ...). Nothing of the run hears it: the run goes on from its stored state,
 * here or in another process.
 */
export function runLetGo(runId: string, why: string): DirigentError {
  return cancelled(`Run ${runId}`, why);
}

/** Options of {@link stepTimedOut}. */
export interface StepTimeoutOptions {
  /** The step's `<timeout>` in ms, when the one reporting knows it. */
  timeoutMs?: number;
  /** Who stopped the work past its deadline, when not the engine: `the worker running its tool`. */
  stoppedBy?: string;
  /** Where the step is in its directive. */
  location?: SourceLocation;
}

/**
 * `STEP_TIMEOUT` (retryable: the step's `<retry>` policy decides): step `step` ran past its
 * `<timeout>`.
 */
export function stepTimedOut(step: string, options: StepTimeoutOptions = {}): DirigentError {
  const ran =
    options.timeoutMs === undefined
      ? 'past the deadline of its <timeout>'
      : `longer than its timeout of ${options.timeoutMs / 1000}s`;
  const stopped = options.stoppedBy === undefined ? '' : `, and ${options.stoppedBy} stopped it`;
  // The fix is in the message too: a run record keeps the message, not the hint.
  return DirigentError.retryable(
    ErrorCode.STEP_TIMEOUT,
    `Step "${step}" ran ${ran}${stopped}; raise <timeout seconds="…"> if it needs longer.`,
    {
      hint: 'The step is tried again per its <retry> policy; raise its <timeout seconds="…"> if the work needs longer.',
      details: { step, ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }) },
      ...(options.location !== undefined && { location: options.location }),
    },
  );
}

/** Options of {@link callTimedOut}. */
export interface CallTimeoutOptions {
  /** How to give the call more time, when it has a limit of its own (`config.timeout`). */
  hint?: string;
  /** What the call had written when it was stopped (stdout, stderr), never secrets. */
  details?: Record<string, unknown>;
}

/**
 * `STEP_TIMEOUT` (retryable) of one call within a step, `label` (`python tool a/b`, `MCP tool
 * "x" on server "y"`), stopped after `timeoutMs`.
 */
export function callTimedOut(
  label: string,
  timeoutMs: number,
  options: CallTimeoutOptions = {},
): DirigentError {
  return DirigentError.retryable(
    ErrorCode.STEP_TIMEOUT,
    `${label} timed out after ${timeoutMs / 1000} s.`,
    {
      hint:
        options.hint ??
        'Raise the step\'s <timeout seconds="…"> if the call needs longer; the step is tried again per its <retry> policy.',
      ...(options.details !== undefined && { details: options.details }),
    },
  );
}
