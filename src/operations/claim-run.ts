import { queuedRecord, type RunStatus } from '../engine/run-record.js';
import {
  checkIdempotencyKey,
  fingerprintOf,
  generationKey,
  type Claim,
  type IdempotencyStore,
  type ReusePolicy,
} from './idempotency.js';
import type { RunBackend } from '../run-backend/run-backend.js';
import type { StartedRun } from './start-request.js';

/** What {@link claimRun} takes: the key, and the run it would start. */
export interface RunClaim {
  key: string;
  /** The directive's item id. */
  directive: string;
  /** The run's inputs, validated. */
  inputs: Record<string, unknown>;
  windowMs: number;
  /** What to do when the key's run failed or was cancelled (default `never`). */
  reuse?: ReusePolicy;
}

/** The ends after which a key with reuse policy `failed` starts a new run. */
const REUSABLE: readonly RunStatus[] = ['failed', 'cancelled'];

/**
 * Claims idempotency key `claim.key` for a run of `claim.directive` with `claim.inputs`:
 * `{ runId }` when this caller is to start the key's run, or the key's run when it exists or its
 * claimer is still starting it. A run claimed by a starter that died first is this caller's to
 * start: the run id is the same, so a queue keeps one job. `INVALID_REQUEST` for a malformed key,
 * `IDEMPOTENCY_CONFLICT` for a key used for another run.
 *
 * A key names a run per generation: its first run is claimed under the key itself, and each run
 * a reuse started under the next generation's key (see {@link generationKey}). The key's run is
 * that of its newest generation, whatever the policy of the start that asks. With reuse `failed`,
 * a start that finds that run failed or cancelled claims the next generation; starters racing
 * there all name the same new run, and one of them starts it.
 */
export async function claimRun(
  claims: IdempotencyStore,
  backend: Pick<RunBackend, 'get'>,
  claim: RunClaim,
): Promise<{ runId: string } | StartedRun> {
  checkIdempotencyKey(claim.key);
  const fingerprint = fingerprintOf(claim.directive, claim.inputs);
  const claimAt = (generation: number): Promise<Claim> =>
    claims.claim(generationKey(claim.key, generation), fingerprint, claim.windowMs);
  let generation = 0;
  let held = await claimAt(generation);
  for (;;) {
    if (held.created) return { runId: held.runId };
    // A newer generation names the key's run now.
    if (await claims.held(generationKey(claim.key, generation + 1), claim.windowMs)) {
      held = await claimAt(++generation);
      continue;
    }
    const earlier = await backend.get(held.runId);
    if (earlier === undefined) {
      // Its claimer is still starting it: it is as good as queued. Else it died first.
      if (held.pending === true)
        return {
          runId: held.runId,
          created: false,
          record: queuedRecord(held.runId, claim.directive, Date.now()),
        };
      return { runId: held.runId };
    }
    if (claim.reuse !== 'failed' || !REUSABLE.includes(earlier.status))
      return { runId: held.runId, created: false, record: earlier };
    held = await claimAt(++generation);
  }
}
