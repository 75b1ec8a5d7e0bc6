/**
 * Workers announce that they live: each keeps a lease in one sorted set (`<prefix>:workers`,
 * member = lease name, score = when the lease lapses, by Redis's clock), renewed every sixth of
 * the lease by one script that also answers whose leases have lapsed and when the next one lapses
 * (`lease-renewer.ts`: the leases of one process are renewed together, and a dead worker's lease
 * is looked at the moment it lapses). A worker that finds a lapsed lease takes over the dead
 * worker's jobs at once (see `reap-dead-worker.ts`), instead of waiting for BullMQ's job locks
 * (30 s) and its stalled-job check, so the runs and tool calls of a dead worker go on elsewhere
 * within the lease. BullMQ's own locks stay as they are (the backstop when no worker is left to
 * notice).
 *
 * A worker's lease names are `<queue>/<BullMQ worker id>`: BullMQ's lock on a job holds the token
 * `<worker id>:<n>`, which tells whose job it is.
 *
 * A worker whose lease lapsed (it was paused, or cut off from Redis, for longer than the lease)
 * may find that others took its work over: the next renewal says so, and the worker stops the work
 * it was doing (`onLost`). Before that renewal answers, a worker that wakes from a pause would
 * go on where it stopped: {@link WorkerLease.confirm} tells it, by its own clock, when it cannot
 * know that its lease still holds, and waits for a renewal to say (a run worker asks before it
 * starts a call, so a call is never started beside the one of the worker that took the run
 * over). Until then, whatever it writes to a run another worker claimed is refused
 * (`run-claims.ts`), so a worker cut off from Redis never drives a run beside another one; a
 * worker that merely lost Redis for a while (Redis restarting) goes on once it is back.
 */
import type { RedisClient } from '../redis-client.js';
import { SILENT_LOGGER, type Logger } from '../../telemetry/logger.js';
import { LeaseRenewer, type LeaseHolder } from './lease-renewer.js';
import { msFromEnv } from '../worker-timing.js';

/**
 * Default lease of a worker: others take its work over this long after its last renewal (a
 * killed worker's work moves within 1.5 s). Renewed every 250 ms (`renewEveryMs`), it
 * outlasts an event loop held up for 1.25 s at once; a worker whose event loop keeps stalling
 * asks for longer (`stretchedLeaseMs`).
 */
export const DEFAULT_WORKER_LEASE_MS = 1500;

/** The sorted set of workers' leases. */
export function workersKey(prefix: string): string {
  return `${prefix}:workers`;
}

/** The lease name of a BullMQ worker of a queue. */
export function leaseName(queue: string, bullWorkerId: string): string {
  return `${queue}/${bullWorkerId}`;
}

/** The queue and BullMQ worker id a lease name stands for. */
export function parseLeaseName(name: string): { queue: string; workerId: string } | undefined {
  const at = name.indexOf('/');
  return at <= 0 ? undefined : { queue: name.slice(0, at), workerId: name.slice(at + 1) };
}

/**
 * The lease from the environment: `DIRIGENT_WORKER_LEASE_MS`, else 1.5 s; `INVALID_REQUEST` when
 * it is set to anything but a whole number of at least 300.
 */
export function workerLeaseMs(env: Record<string, string | undefined> = process.env): number {
  return msFromEnv(env, 'DIRIGENT_WORKER_LEASE_MS', 300) ?? DEFAULT_WORKER_LEASE_MS;
}

/** What a {@link WorkerLease} needs. */
export interface WorkerLeaseOptions {
  redis: RedisClient;
  prefix: string;
  /** The lease names kept alive (see {@link leaseName}). */
  names: string[];
  /** The lease, ms (default {@link workerLeaseMs}). */
  leaseMs?: number;
  /** Told when this worker's lease had lapsed and others may have taken its work: stop it. */
  onLost: () => void;
  /** Told of other workers' lapsed leases: take their work over (see `reap-dead-worker.ts`). */
  onLapsed: (names: string[]) => Promise<void>;
  /** Where failed renewals are logged (default: nowhere). */
  logger?: Logger;
}

/** A worker's lease, renewed until {@link close}. */
export class WorkerLease implements LeaseHolder {
  readonly leaseMs: number;
  readonly names: readonly string[];
  private readonly renewer: LeaseRenewer;
  private closed = false;
  /**
   * Until when the leases hold for sure, by this process's clock: a renewal sent at t set them to
   * lapse at Redis's now + leaseMs, which is not before t + leaseMs.
   */
  private heldUntil = 0;
  /** Who waits for a renewal to say whether the leases still hold. */
  private confirmations: ((held: boolean) => void)[] = [];

  constructor(private readonly options: WorkerLeaseOptions) {
    this.leaseMs = options.leaseMs ?? workerLeaseMs();
    this.names = [...options.names];
    const log = options.logger ?? SILENT_LOGGER;
    this.renewer = LeaseRenewer.of(options.redis, workersKey(options.prefix), this.leaseMs, log);
    for (const name of this.names)
      log.info(
        { lease: name, lease_ms: this.leaseMs },
        `taking ${parseLeaseName(name)?.queue ?? 'its'} jobs as ${name}, lease ${this.leaseMs} ms renewed every ${this.renewer.everyMs} ms`,
      );
    this.renewer.add(this);
  }

  /**
   * True when the leases hold for sure now; otherwise (this process was paused, or could not
   * renew, for about a lease) a promise of whether they still do, once a renewal has said so:
   * false when they had lapsed (the work they covered is `onLost`), or when the lease closes.
   */
  confirm(): true | Promise<boolean> {
    if (Date.now() < this.heldUntil) return true;
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.confirmations.push(resolve);
      this.renewer.renewNow();
    });
  }

  /** Stops renewing and gives the leases up: others see this worker gone at once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.settle(false);
    await this.renewer.remove(this);
  }

  /** See {@link LeaseHolder.renewed}. */
  renewed(sentAt: number, lost: readonly string[]): void {
    if (this.closed) return;
    this.heldUntil = sentAt + this.leaseMs;
    if (lost.length > 0) {
      this.options.onLost();
      this.settle(false);
    } else if (Date.now() < this.heldUntil) this.settle(true);
    // Otherwise the reply came after a pause: the renewer asks again at once.
  }

  /** See {@link LeaseHolder.takeOver}. */
  takeOver(names: readonly string[]): Promise<void> {
    return this.options.onLapsed([...names]);
  }

  private settle(held: boolean): void {
    for (const resolve of this.confirmations.splice(0)) resolve(held);
  }
}
