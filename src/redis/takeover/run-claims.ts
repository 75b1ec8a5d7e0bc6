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
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { hashOf, storedRunOf, type StoredHash, type VersionedRun } from '../run-store/run-hash.js';
import type { RunStoreCommands } from '../run-store/run-store-scripts.js';
import type { RedisClient } from '../redis-client.js';

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

/**
 * The claims of one worker's store: the epoch of each run it created or claimed (its writes carry
 * it), and the runs it claimed and read but has not loaded yet.
 */
export class RunClaims {
  private readonly epochs = new Map<string, string>();
  private readonly claimed = new Map<string, VersionedRun>();

  /** `owner`: the worker's lease name. */
  constructor(
    private readonly redis: RedisClient & RunStoreCommands,
    private readonly workersKey: string,
    readonly owner: string,
  ) {}

  /** The fence a write of the run carries: its claimed epoch, or '0' (create it). */
  fence(runId: string): string {
    return this.epochs.get(runId) ?? '0';
  }

  /** A write went through: a run this worker created has epoch 1. */
  wrote(runId: string): void {
    if (!this.epochs.has(runId)) this.epochs.set(runId, '1');
  }

  /**
   * Claims the run whose hash is `runKey` and reads it, in one script; a run claimed and not yet
   * loaded answers from memory. `read` is the hash read, when one was. An ended run is only read,
   * unless `revive` (a redrive claims it, to write it again).
   */
  async claim(
    runKey: string,
    runId: string,
    revive = false,
  ): Promise<{ claim: RunClaim; read?: StoredHash }> {
    const pending = this.claimed.get(runId);
    if (pending !== undefined) return { claim: { status: 'claimed', run: pending } };
    const reply = await this.redis.dirigentClaimRun(
      runKey,
      this.workersKey,
      this.owner,
      revive ? 'revive' : '',
    );
    if (reply[0] === 'missing') return { claim: { status: 'missing' } };
    if (reply[0] === 'busy') return { claim: { status: 'busy', owner: reply[1]! } };
    const read = storedRunOf(hashOf(reply, 3));
    if (read === undefined) return { claim: { status: 'missing' } };
    if (reply[1] !== '') this.epochs.set(runId, reply[1]!); // '': an ended run, read only
    this.claimed.set(runId, read.run);
    const claim: RunClaim = {
      status: 'claimed',
      run: read.run,
      ...(reply[2] && { takenOverFrom: reply[2] }),
    };
    return { claim, read };
  }

  /** The run claimed and read, once: the first load after a claim takes it. */
  take(runId: string): void {
    this.claimed.delete(runId);
  }

  /** Lets the run go in Redis (if this worker holds it) and forgets the claim. */
  async release(runKey: string, runId: string): Promise<void> {
    this.forget(runId);
    await this.redis.dirigentReleaseRun(runKey, this.owner);
  }

  /** Forgets the claim without a word to Redis. */
  forget(runId: string): void {
    this.epochs.delete(runId);
    this.claimed.delete(runId);
  }
}
