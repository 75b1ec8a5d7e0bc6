import { queuedRecord } from '../engine/run-record.js';
import { checkIdempotencyKey, fingerprintOf, type IdempotencyStore } from './idempotency.js';
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
}

/**
 * Claims idempotency key `claim.key` for a run of `claim.directive` with `claim.inputs`:
 * `{ runId }` when this caller is to start the key's run, or the key's run when it exists or its
 * claimer is still starting it. A run claimed by a starter that died first is this caller's to
 * start: the run id is the same, so a queue keeps one job. `INVALID_REQUEST` for a malformed key,
 * `IDEMPOTENCY_CONFLICT` for a key used for another run.
 */
export async function claimRun(
  claims: IdempotencyStore,
  backend: Pick<RunBackend, 'get'>,
  claim: RunClaim,
): Promise<{ runId: string } | StartedRun> {
  checkIdempotencyKey(claim.key);
  const fingerprint = fingerprintOf(claim.directive, claim.inputs);
  const { runId, created, pending } = await claims.claim(claim.key, fingerprint, claim.windowMs);
  if (created) return { runId };
  const earlier = await backend.get(runId);
  if (earlier !== undefined) return { runId, created: false, record: earlier };
  // Its claimer is still starting it: it is as good as queued.
  if (pending === true)
    return { runId, created: false, record: queuedRecord(runId, claim.directive, Date.now()) };
  return { runId };
}
