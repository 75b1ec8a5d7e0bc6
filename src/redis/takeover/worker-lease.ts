/**
 * Workers announce that they live: each keeps a lease in one sorted set (`<prefix>:workers`,
 * member = lease name, score = when the lease lapses, by Redis's clock), renewed every third of
 * the lease by one script that also answers whose leases have lapsed. A worker that finds a lapsed
 * lease takes over the dead worker's jobs at once (see `reap-dead-worker.ts`), instead of waiting
 * for BullMQ's job locks (30 s) and its stalled-job check, so the runs and tool calls of a dead
 * worker go on elsewhere within seconds. BullMQ's own locks stay as they are (the backstop when
 * no worker is left to notice).
 *
 * A worker's lease names are `<queue>/<BullMQ worker id>`: BullMQ's lock on a job holds the token
 * `<worker id>:<n>`, which tells whose job it is.
 *
 * A worker whose lease lapsed (it was paused, or cut off from Redis, for longer than the lease)
 * may find that others took its work over: the next renewal says so, and the worker stops the work
 * it was doing (`onLost`). Before that renewal answers, a worker that wakes from a pause would
 * go on where it stopped: {@link WorkerLease.confirm} tells it, by its own clock, when it cannot
 * know that its lease still holds, and waits for a renewal to say (a run worker asks before it
 * starts a call, so a call is never started beside the one of the worker that took the run over). Until then, whatever it writes to a run another worker claimed is
 * refused (`run-claims.ts`), so a worker cut off from Redis never drives a run beside another one;
 * a worker that merely lost Redis for a while (Redis restarting) goes on once it is back.
 */
import type { RedisClient } from '../redis-client.js';
import { SILENT_LOGGER, type Logger } from '../../telemetry/logger.js';

/** Default lease of a worker: others take its work over this long after its last renewal. */
export const DEFAULT_WORKER_LEASE_MS = 3000;

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

/** The lease from the environment: `DIRIGENT_WORKER_LEASE_MS` (at least 300), else 3 s. */
export function workerLeaseMs(env: Record<string, string | undefined> = process.env): number {
  const ms = Number(env.DIRIGENT_WORKER_LEASE_MS);
  return Number.isFinite(ms) && ms >= 300 ? ms : DEFAULT_WORKER_LEASE_MS;
}

/**
 * KEYS: workers, the time of the last renewal by anyone. ARGV: lease ms, '1' when (re)joining,
 * lease names. Renews the leases; answers `{lost, lapsed names…}`: lost is 1 when one of the
 * leases had lapsed (or was gone) and this is not a join; the lapsed names are other workers' (at
 * most 20). When nobody renewed for a whole lease, Redis itself was away (restarted, or cut off
 * from every worker): every lease is extended by one lease instead, so that a Redis restart is not
 * taken for the death of every worker.
 */
const RENEW_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
local last = tonumber(redis.call('GET', KEYS[2]) or now)
redis.call('SET', KEYS[2], now)
if now - last > lease then
  for _, name in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    redis.call('ZADD', KEYS[1], 'GT', now + lease, name)
  end
end
local lost = 0
local mine = {}
for i = 3, #ARGV do
  mine[ARGV[i]] = true
  local lapse = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if ARGV[2] ~= '1' and (not lapse or tonumber(lapse) <= now) then lost = 1 end
  redis.call('ZADD', KEYS[1], now + lease, ARGV[i])
end
local out = {lost}
for _, name in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 20)) do
  if not mine[name] then out[#out + 1] = name end
end
return out
`;

interface LeaseCommands {
  dirigentRenewLease(...args: (string | number)[]): Promise<(number | string)[]>;
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
export class WorkerLease {
  readonly leaseMs: number;
  private readonly redis: RedisClient & LeaseCommands;
  private readonly timer: NodeJS.Timeout;
  private renewing = false;
  private reaping = false;
  private joining = true;
  private closed = false;
  private failing = false;
  /**
   * Until when the leases hold for sure, by this process's clock: a renewal sent at t set them to
   * lapse at Redis's now + leaseMs, which is not before t + leaseMs.
   */
  private heldUntil = 0;
  /** Who waits for a renewal to say whether the leases still hold. */
  private confirmations: ((held: boolean) => void)[] = [];

  constructor(private readonly options: WorkerLeaseOptions) {
    this.leaseMs = options.leaseMs ?? workerLeaseMs();
    const redis = options.redis as RedisClient & Partial<LeaseCommands>;
    if (redis.dirigentRenewLease === undefined)
      options.redis.defineCommand('dirigentRenewLease', { numberOfKeys: 2, lua: RENEW_SCRIPT });
    this.redis = options.redis as RedisClient & LeaseCommands;
    const every = Math.max(100, Math.round(this.leaseMs / 3));
    for (const name of options.names)
      (options.logger ?? SILENT_LOGGER).info(
        { lease: name, lease_ms: this.leaseMs },
        `taking ${parseLeaseName(name)?.queue ?? 'its'} jobs as ${name}, lease ${this.leaseMs} ms renewed every ${every} ms`,
      );
    this.timer = setInterval(() => void this.renew(), every);
    this.timer.unref();
    void this.renew();
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
      void this.renew();
    });
  }

  /** Stops renewing and gives the leases up: others see this worker gone at once. */
  async close(): Promise<void> {
    this.closed = true;
    this.settle(false);
    clearInterval(this.timer);
    await this.redis.zrem(workersKey(this.options.prefix), ...this.options.names).catch(() => {
      // Redis away: the leases lapse by themselves within leaseMs; others then look for work
      // of these workers, and find none.
    });
  }

  /** Takes over the work of lapsed leases, one batch at a time (renewals go on meanwhile). */
  private async takeOver(names: string[]): Promise<void> {
    if (this.reaping) return;
    this.reaping = true;
    try {
      await this.options.onLapsed(names);
    } catch {
      // The next renewal finds the leases still lapsed and tries again.
    } finally {
      this.reaping = false;
    }
  }

  private async renew(): Promise<void> {
    if (this.closed || this.renewing) return;
    this.renewing = true;
    const sent = Date.now();
    try {
      const { prefix, names } = this.options;
      const reply = await this.redis.dirigentRenewLease(
        workersKey(prefix),
        `${workersKey(prefix)}:renewed`,
        this.leaseMs,
        this.joining ? '1' : '0',
        ...names,
      );
      if (this.closed) return;
      const lost = Number(reply[0]) === 1;
      if (lost) this.options.onLost();
      this.joining = false;
      this.heldUntil = sent + this.leaseMs;
      // A reply to a renewal sent before a pause says nothing of now: the next renewal will.
      if (lost) this.settle(false);
      else if (Date.now() < this.heldUntil) this.settle(true);
      else setImmediate(() => void this.renew());
      const lapsed = reply.slice(1).map(String);
      if (lapsed.length > 0) void this.takeOver(lapsed);
      this.failing = false;
    } catch (err) {
      // The next renewal tries again; writes to runs stay fenced meanwhile.
      if (!this.failing)
        (this.options.logger ?? SILENT_LOGGER).warn(
          { err: err instanceof Error ? err.message : String(err) },
          `could not renew this worker's lease in Redis: ${err instanceof Error ? err.message : String(err)}`,
        );
      this.failing = true;
    } finally {
      this.renewing = false;
    }
  }

  private settle(held: boolean): void {
    for (const resolve of this.confirmations.splice(0)) resolve(held);
  }
}
