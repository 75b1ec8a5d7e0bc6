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
 * `WAIT` holds the connection it is sent on, so after a wait that timed out the store sends none
 * for {@link REPLICA_RETRY_MS}: a primary left without replicas (after a failover, until the old
 * primary comes back as a replica) costs one timed-out wait every few seconds, not one per step.
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

/** How long a store sends no `WAIT` after one timed out, ms. */
export const REPLICA_RETRY_MS = 5000;

/** Sends the waits of one store (see the module comment). */
export class ReplicaWaiter {
  /** Until when no wait is sent (after one timed out), epoch ms. */
  private quietUntil = 0;

  constructor(
    private readonly wait: ReplicaWait,
    private readonly redis: { wait(replicas: number, timeoutMs: number): Promise<number> },
  ) {}

  /** Waits for the replicas to hold every write so far, unless a recent wait timed out. */
  async after(runId: string): Promise<void> {
    if (Date.now() < this.quietUntil) return;
    const acknowledged = await this.redis.wait(this.wait.replicas, this.wait.timeoutMs);
    if (acknowledged >= this.wait.replicas) return;
    this.quietUntil = Date.now() + REPLICA_RETRY_MS;
    this.wait.lagging?.(runId, acknowledged);
  }
}

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
