/**
 * Who drives a run on Redis. A worker *claims* a run before it drives it (a script on the run's
 * hash, in the same round trip as reading it: see `RedisRunStore.claim`): the run's `owner` field
 * becomes the worker's lease name and its `epoch` grows. Every write of a worker's store carries
 * the epoch it claimed (or created the run with), so once another worker claims the run, the
 * first one's writes are refused (`RUN_TAKEN_OVER`): two workers never both drive a run, even when
 * one of them was cut off from Redis or paused past its lease and comes back. A claim is refused
 * (`busy`) while the owner's lease (see `worker-lease.ts`) is live, and granted once it has lapsed.
 * A worker lets a run go when it parks it, hands it back or sees it wait; a save of an ended run
 * clears its owner.
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { VersionedRun } from './run-hash.js';

/** What claiming a run found. */
export type RunClaim =
  | { status: 'missing' }
  | { status: 'busy'; /** The lease name of the worker holding it. */ owner: string }
  | {
      status: 'claimed';
      run: VersionedRun;
      /** The worker that held the run and never let it go (its lease lapsed): a takeover. */
      takenOverFrom?: string;
    };

/** The error of a write to a run that another worker claimed since. */
export function runTakenOver(runId: string, writer: string, holder: string): DirigentError {
  return DirigentError.fatal(
    ErrorCode.RUN_TAKEN_OVER,
    `Run ${runId} was taken over by ${holder === '' ? 'another worker' : `worker ${holder}`}: this worker (${writer}) lost its lease (cut off from Redis or paused for longer than it lasts), so it stops driving the run and writes nothing more to it.`,
    {
      hint: 'Nothing is lost: the worker holding the run goes on from its last stored state. Frequent takeovers mean workers are starved of CPU or of their connection to Redis; raise DIRIGENT_WORKER_LEASE_MS if pauses are expected.',
      details: { runId, writer, holder },
    },
  );
}

/** The error of a run that another live worker drives now. */
export function runBusy(runId: string, owner: string): DirigentError {
  return DirigentError.retryable(
    ErrorCode.RUN_BUSY,
    `Run ${runId} is driven by worker ${owner} right now.`,
    {
      hint: 'The job that asked for it comes back once that worker lets the run go.',
      details: { runId, owner },
    },
  );
}

/** The error of a save that expected another version of the run (it was saved meanwhile). */
export function runConflict(
  runId: string,
  expected: number | undefined,
  actual: number,
): DirigentError {
  return DirigentError.retryable(
    ErrorCode.RUN_CONFLICT,
    `Run ${runId} was saved meanwhile: expected version ${expected}, found ${actual}.`,
    {
      hint: 'Load the run again, apply the change to it and save it with its new version.',
      details: { runId, expectedVersion: expected, actualVersion: actual },
    },
  );
}
