/**
 * Errors about a run as a whole, asked for by id: one that does not exist, one that has ended,
 * one that waits for nothing. Every face (library, CLI, HTTP API, workers) builds them here, so a
 * run missing from Redis and one missing from an embedded project read alike.
 */
import { DirigentError } from './dirigent-error.js';
import { ErrorCode } from './error-codes.js';

/**
 * Where runs are kept, for the hint of {@link runNotFound}: an embedded project keeps them in
 * `<project>/.dirigent/runs/` once they wait or end; a Redis deployment keeps ended runs for its
 * retention period.
 */
export type RunKeeping = 'embedded' | 'redis';

/**
 * `RUN_NOT_FOUND`: no run has the id `runId` (never started, or no longer kept). `keeping` says
 * where the runs of the deployment are, for the hint; without it the hint only says how to list
 * them.
 */
export function runNotFound(runId: string, keeping?: RunKeeping): DirigentError {
  const hint =
    keeping === 'embedded'
      ? 'Embedded runs are kept in <project>/.dirigent/runs/ once they wait or end; list them with `dirigent runs`.'
      : keeping === 'redis'
        ? 'List runs (`dirigent runs`, `GET /v1/runs`); ended runs are kept for the retention period.'
        : 'List runs (`dirigent runs`, `GET /v1/runs`).';
  return DirigentError.fatal(ErrorCode.RUN_NOT_FOUND, `No run with id ${runId}.`, {
    hint,
    details: { runId },
  });
}

/**
 * `RUN_ENDED`: the run has completed, failed or been cancelled, so there is nothing to cancel.
 * `details.status` is the status it ended with.
 */
export function runEnded(runId: string, status: string): DirigentError {
  return DirigentError.fatal(
    ErrorCode.RUN_ENDED,
    `Run ${runId} has ended (${status}); there is nothing to cancel.`,
    {
      hint: `Its record: \`dirigent status ${runId}\` (GET /v1/runs/${runId}).`,
      details: { runId, status },
    },
  );
}

/**
 * What was asked of a run that waits for nothing, for {@link runNotWaiting}: a signal, an answer
 * to its waiting step (`execute` with `resume`), or to resume it in this process (`resume`; with
 * `resume-interrupted` a run whose process stopped while it ran may be resumed too).
 */
export type RunWaitAsk = 'signal' | 'answer' | 'resume' | 'resume-interrupted';

const NOT_WAITING: Record<RunWaitAsk, string> = {
  signal: 'it no longer waits for signals',
  answer: 'nothing in it waits for an answer',
  resume: 'only a waiting run can be resumed',
  'resume-interrupted': 'only a running or waiting run can be resumed',
};

/**
 * `RUN_NOT_WAITING`: the run is `status` and waits for nothing, so `ask` cannot be done. `error`
 * is the run's own error, when it has one, which says why it stopped waiting.
 */
export function runNotWaiting(
  runId: string,
  status: string,
  ask: RunWaitAsk,
  error?: { message: string } | null,
): DirigentError {
  const why = error ? ` (${error.message})` : '';
  return DirigentError.fatal(
    ErrorCode.RUN_NOT_WAITING,
    `Run ${runId} is ${status}${why}: ${NOT_WAITING[ask]}.`,
    {
      hint: `Its record: \`dirigent status ${runId}\` (GET /v1/runs/${runId}); start a new run to do the work again.`,
      details: { runId, status },
    },
  );
}

/** The signal a payload was refused for: the run the step waits in, the step and its signal. */
export interface RefusedSignal {
  runId: string;
  step: string;
  signal: string;
}

/**
 * `INVALID_PAYLOAD`: the payload of a signal does not match the `<answer>` declarations of the
 * step that waits for it, so it was refused and the run waits on as it was. `problems` lists every
 * mismatch (also in `details.problems`); `expected` says what the answer is (`an object with
 * approved (boolean, required)`) and `example` shows one.
 */
export function invalidPayload(
  at: RefusedSignal,
  problems: string[],
  expected: string,
  example: unknown,
): DirigentError {
  return DirigentError.fatal(
    ErrorCode.INVALID_PAYLOAD,
    `Signal "${at.signal}" to run ${at.runId} was refused: ${problems.join('; ')}. The run still waits for it.`,
    {
      hint: `Step "${at.step}" is answered with ${expected}, e.g. ${JSON.stringify(example)}.`,
      details: { runId: at.runId, step: at.step, signal: at.signal, problems },
    },
  );
}

/**
 * `RUN_NOT_REDRIVABLE`: the run is `status` and cannot be redriven, for the reason `why` (see
 * `engine/redrive.ts`).
 */
export function runNotRedrivable(runId: string, status: string, why: string): DirigentError {
  return DirigentError.fatal(
    ErrorCode.RUN_NOT_REDRIVABLE,
    `Run ${runId} cannot be redriven: ${why}.`,
    {
      hint: `Only a failed or cancelled run is redriven. Its record: \`dirigent status ${runId}\`; to do its work again from a step, \`dirigent rerun ${runId} --from <step>\`.`,
      details: { runId, status },
    },
  );
}

/**
 * `RUN_NOT_ENDED`: the run is `status` (queued, running or waiting), and `ask` needs a run that
 * has ended.
 */
export function runNotEnded(runId: string, status: string, ask: string): DirigentError {
  return DirigentError.fatal(
    ErrorCode.RUN_NOT_ENDED,
    `Run ${runId} is ${status}: only a run that has ended can be asked to ${ask}.`,
    {
      hint: `Wait for it to end, or cancel it first (\`dirigent cancel ${runId}\`).`,
      details: { runId, status },
    },
  );
}
