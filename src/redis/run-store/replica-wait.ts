/**
 * Waiting for replicas to hold what a run has done. Redis replicates asynchronously: a write the
 * primary acknowledged may not have reached a replica when the primary dies, and a failover
 * (Sentinel, or a managed one) then promotes a replica without it. For a run, the writes that
 * matter are those that record a step's end or the run's: lost, the step would run again, and a
 * run whose end a client was told of would go on. So after such a save, and before the worker
 * goes on (the next step, the job's completion that tells the client), the store sends `WAIT`
 * until `replicas` replicas hold every write of its connection so far, or `timeoutMs` passes.
 * A wait that times out (a replica down or far behind) lets the run go on, and is told
 * (`lagging`): the deployment stays up, and the operator hears that its durability is reduced.
 */

import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';

/** How a store waits for replicas (see the module comment). */
export interface ReplicaWait {
  /** Replicas that must hold a step's end before the run goes on. */
  replicas: number;
  /** The longest a save waits for them, ms. */
  timeoutMs: number;
  /** Told when a wait ended with fewer replicas than asked for. */
  lagging?: (runId: string, acknowledged: number) => void;
}

/** The default wait's longest, ms. */
export const DEFAULT_REPLICA_WAIT_MS = 1000;

/**
 * Whether a save records an end that must reach replicas: a step's end or a run's (its events
 * say so), or step records written on their own (foreach items, branch results).
 */
export function recordsAnEnd(mode: string, events: readonly string[] | undefined): boolean {
  if (mode === 'steps') return true;
  return (events ?? []).some(
    (e) => e.includes('"type":"step.ended"') || e.includes('"type":"run.ended"'),
  );
}

/**
 * The wait a deployment's workers use: `DIRIGENT_REPLICA_WAIT` replicas (`0` turns it off) within
 * `DIRIGENT_REPLICA_WAIT_MS`; by default one replica on a Sentinel deployment, none otherwise.
 * Undefined when there is nothing to wait for. On a Redis Cluster `WAIT` cannot be sent to the
 * primary of a shard's slot, so asking for it there is `INVALID_CONFIG`.
 */
export function replicaWaitOf(
  kind: 'single' | 'sentinel' | 'cluster',
  env: Record<string, string | undefined>,
): ReplicaWait | undefined {
  const raw = env.DIRIGENT_REPLICA_WAIT;
  const replicas =
    raw !== undefined && /^\d+$/.test(raw.trim()) ? Number(raw) : kind === 'sentinel' ? 1 : 0;
  if (replicas === 0) return undefined;
  if (kind === 'cluster')
    throw DirigentError.fatal(
      ErrorCode.INVALID_CONFIG,
      `DIRIGENT_REPLICA_WAIT is ${raw}, and the deployment is a Redis Cluster, where Dirigent does not wait for replicas.`,
      {
        hint: 'Unset DIRIGENT_REPLICA_WAIT (or set it to 0); see docs/scaling.md for what a cluster failover can lose.',
      },
    );
  const ms = Number(env.DIRIGENT_REPLICA_WAIT_MS);
  return { replicas, timeoutMs: Number.isInteger(ms) && ms > 0 ? ms : DEFAULT_REPLICA_WAIT_MS };
}
