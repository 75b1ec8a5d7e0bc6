/**
 * The renewal of a process's worker leases (see `worker-lease.ts`). Every lease a process keeps on
 * one connection and prefix (a run worker's and a tool worker's, in `dirigent worker`) is renewed
 * by one script, a sixth of a lease apart, so the lease stays ahead of a renewal delayed by a busy
 * event loop (see {@link renewEveryMs}). A process whose event loop was held up lately asks for a
 * longer lease, long enough for such a stall again (see {@link stretchedLeaseMs}).
 *
 * The same script answers whose leases have lapsed and when the next of the others' leases lapses;
 * the renewer renews at that moment if it comes before the next renewal is due. A dead worker is
 * thus found when its lease lapses, not at the next look after: the check follows the leases'
 * expiry (as Temporal's lease-expiry tasks do) instead of a fixed poll (as BullMQ's stalled-job
 * check does). While every worker renews on time, no look is ever made outside a renewal: the
 * others' leases lapse five sixths of a lease after their last renewal, later than this worker's
 * next renewal.
 */
import type { RedisClient } from '../redis-client.js';
import { SILENT_LOGGER, type Logger } from '../../telemetry/logger.js';
import { EventLoopStalls } from './event-loop-stalls.js';

/**
 * How often leases of `leaseMs` are renewed: every sixth of the lease (at least 50 ms). A worker
 * is taken for dead only when no renewal reached Redis for a whole lease, so an event loop held
 * up for up to five sixths of the lease at once (1.25 s with the default lease) never makes a live
 * worker look dead.
 */
export function renewEveryMs(leaseMs: number): number {
  return Math.max(50, Math.round(leaseMs / 6));
}

/**
 * The lease a renewal asks for, ms: the worker's lease, or, when its event loop was lately held
 * up for `stallMs` at once (see `event-loop-stalls.ts`), long enough for such a stall to begin just
 * as a renewal is due with half of it to spare, up to three leases. A worker held up now and then
 * is taken for dead only when it stalls longer than it lately did; a worker that never stalls keeps
 * the short lease, so its death is seen as soon.
 */
export function stretchedLeaseMs(leaseMs: number, stallMs: number): number {
  const needed = Math.ceil(1.5 * stallMs + renewEveryMs(leaseMs));
  return Math.min(3 * leaseMs, Math.max(leaseMs, needed));
}

/** At most this many lapsed leases of others are told of per renewal (the rest at the next). */
const LAPSED_PER_RENEWAL = 20;

/**
 * KEYS: the workers' leases (sorted set: lease name → when it lapses, by Redis's clock), the time
 * of the last renewal by anyone. ARGV: the lease this renewal asks for (ms), the workers' lease
 * (ms), at most how many lapsed leases to answer, how many of the names that follow join now, then
 * the names joining, then the names held already. Renews every name; answers `{next lapse, lost
 * count, lost names…, lapsed names…}`: the next lapse is in how many ms the earliest live lease of
 * another worker lapses (-1: none seen), the lost names are held names whose lease had lapsed or
 * was gone (another worker may have taken their work), the lapsed names are other workers' leases
 * that have lapsed.
 *
 * When nobody renewed for a whole lease, the fault is not one worker's: Redis was away (restarted,
 * failed over, cut off from every worker) or every worker was held up at once. That silence does
 * not count against any lease: every lease still live when it began is pushed back by its length,
 * so that a Redis restart is taken neither for the death of every worker nor of those that
 * reconnect last. (A worker that died before it began is not spared; one that died during it is
 * found that much later.)
 *
 * Commands when nothing lapsed: TIME, SET … GET, ZRANGE (the earliest leases, with their scores)
 * and ZADD XX CH (the held names): the ZRANGE tells both what lapsed and what lapses next, and the
 * ZADD's count tells whether a held name was gone. Reads beyond those only when one of those says
 * something is amiss.
 */
const RENEW_SCRIPT = `
local workers = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease, base = tonumber(ARGV[1]), tonumber(ARGV[2])
local limit, joining = tonumber(ARGV[3]), tonumber(ARGV[4])
local lapse = now + lease
local last = tonumber(redis.call('SET', KEYS[2], now, 'GET') or now)
local silence = now - last
if silence > base then
  local live = redis.call('ZRANGEBYSCORE', workers, '(' .. last, '+inf', 'WITHSCORES')
  for i = 1, #live, 2 do
    redis.call('ZADD', workers, tonumber(live[i + 1]) + silence, live[i])
  end
end
local mine, held = {}, {}
for i = 5, #ARGV do
  mine[ARGV[i]] = true
  if i > 4 + joining then held[#held + 1] = ARGV[i] end
end
local want = limit + #ARGV - 4
local first = redis.call('ZRANGE', workers, 0, want - 1, 'WITHSCORES')
local lost, lapsed, nextLapse = {}, {}, -1
for i = 1, #first, 2 do
  local name, score = first[i], tonumber(first[i + 1])
  if score <= now then
    if mine[name] then lost[name] = true
    elseif #lapsed < limit then lapsed[#lapsed + 1] = name end
  elseif nextLapse < 0 and not mine[name] then
    nextLapse = score - now
  end
end
if #first == 2 * want and tonumber(first[#first]) <= now then
  for _, name in ipairs(held) do
    local score = redis.call('ZSCORE', workers, name)
    if score and tonumber(score) <= now then lost[name] = true end
  end
end
if #held > 0 then
  local args = {}
  for _, name in ipairs(held) do
    args[#args + 1] = lapse
    args[#args + 1] = name
  end
  if redis.call('ZADD', workers, 'XX', 'CH', unpack(args)) < #held then
    for _, name in ipairs(held) do
      if not redis.call('ZSCORE', workers, name) then
        lost[name] = true
        redis.call('ZADD', workers, lapse, name)
      end
    end
  end
end
if joining > 0 then
  local args = {}
  for i = 5, 4 + joining do
    args[#args + 1] = lapse
    args[#args + 1] = ARGV[i]
  end
  redis.call('ZADD', workers, unpack(args))
end
local out = {nextLapse, 0}
for _, name in ipairs(held) do
  if lost[name] then out[#out + 1] = name end
end
out[2] = #out - 2
for _, name in ipairs(lapsed) do out[#out + 1] = name end
return out
`;

interface RenewCommands {
  dirigentRenewLeases(...args: (string | number)[]): Promise<(number | string)[]>;
}

/** A holder of leases a {@link LeaseRenewer} renews (a `WorkerLease`). */
export interface LeaseHolder {
  /** The lease names renewed. */
  readonly names: readonly string[];
  /**
   * A renewal sent at `sentAt` (this process's clock) renewed the names, which now hold at least
   * until `sentAt` + the lease; `lost`: those of them that had lapsed or were gone.
   */
  renewed(sentAt: number, lost: readonly string[]): void;
  /** Told of other workers' lapsed leases: take their work over. */
  takeOver(names: readonly string[]): Promise<void>;
}

/**
 * Renews the leases of every holder on one connection, prefix and lease length (see the module
 * comment); {@link LeaseRenewer.of} hands out the one of a connection.
 */
export class LeaseRenewer {
  private static readonly renewers = new WeakMap<RedisClient, Map<string, LeaseRenewer>>();

  /** How often a renewal is sent when no other lease lapses sooner. */
  readonly everyMs: number;
  private readonly redis: RedisClient & RenewCommands;
  private readonly holders = new Set<LeaseHolder>();
  /** Holders whose names no renewal has written yet: their first renewal cannot find them lost. */
  private readonly joining = new Set<LeaseHolder>();
  private timer: NodeJS.Timeout | undefined;
  /** The renewal under way, if one is. */
  private renewal: Promise<void> | undefined;
  /** A renewal was asked for while one was under way: another goes at once after it. */
  private again = false;
  private reaping = false;
  private failing = false;
  private readonly stalls = new EventLoopStalls();
  /** The lease the last renewal asked for, ms. */
  private asked: number;

  private constructor(
    redis: RedisClient,
    /** The sorted set of the leases (`worker-lease.ts`'s `workersKey`). */
    private readonly workers: string,
    readonly leaseMs: number,
    private readonly logger: Logger,
    private readonly forget: () => void,
  ) {
    this.everyMs = renewEveryMs(leaseMs);
    this.asked = leaseMs;
    const r = redis as RedisClient & Partial<RenewCommands>;
    if (r.dirigentRenewLeases === undefined)
      redis.defineCommand('dirigentRenewLeases', { numberOfKeys: 2, lua: RENEW_SCRIPT });
    this.redis = redis as RedisClient & RenewCommands;
  }

  /**
   * The renewer of the leases of `leaseMs` in the sorted set `workers` on `redis`, made on first
   * use: the leases a process keeps on one connection are renewed together.
   */
  static of(redis: RedisClient, workers: string, leaseMs: number, logger?: Logger): LeaseRenewer {
    let byKey = LeaseRenewer.renewers.get(redis);
    if (byKey === undefined) LeaseRenewer.renewers.set(redis, (byKey = new Map()));
    const key = `${leaseMs}/${workers}`;
    const known = byKey.get(key);
    if (known !== undefined) return known;
    const made = new LeaseRenewer(redis, workers, leaseMs, logger ?? SILENT_LOGGER, () =>
      byKey.delete(key),
    );
    byKey.set(key, made);
    return made;
  }

  /** Renews `holder`'s names from now on, starting at once. */
  add(holder: LeaseHolder): void {
    this.holders.add(holder);
    this.joining.add(holder);
    this.renewNow();
  }

  /** Sends a renewal now (or right after the one under way). */
  renewNow(): void {
    if (this.renewal !== undefined) this.again = true;
    else this.schedule(0);
  }

  /**
   * Stops renewing `holder`'s names and gives them up, so that others see them gone at once; the
   * last holder gone, the renewer stops.
   */
  async remove(holder: LeaseHolder): Promise<void> {
    if (!this.holders.delete(holder)) return;
    this.joining.delete(holder);
    if (this.holders.size === 0) {
      clearTimeout(this.timer);
      this.stalls.stop();
      this.forget();
    }
    // A renewal under way may write the names again: give them up after it.
    await this.renewal;
    if (holder.names.length === 0) return;
    await this.redis.zrem(this.workers, ...holder.names).catch(() => {
      // Redis away: the leases lapse by themselves within a lease; others then look for work
      // of these workers, and find none.
    });
  }

  private schedule(inMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.renew(), inMs);
    this.timer.unref();
  }

  private renew(): Promise<void> {
    if (this.renewal !== undefined) {
      this.again = true;
      return this.renewal;
    }
    if (this.holders.size === 0) return Promise.resolve();
    this.renewal = this.renewOnce().finally(() => {
      this.renewal = undefined;
      if (this.holders.size === 0) return;
      if (this.again) {
        this.again = false;
        this.schedule(0);
      }
    });
    return this.renewal;
  }

  /** One renewal, and the next one scheduled. */
  private async renewOnce(): Promise<void> {
    const joining = [...this.joining];
    const held = [...this.holders].filter((h) => !this.joining.has(h));
    const sent = Date.now();
    let nextInMs = this.everyMs;
    const stallMs = this.stalls.longestMs(sent);
    const asked = stretchedLeaseMs(this.leaseMs, stallMs);
    if (asked > this.leaseMs !== this.asked > this.leaseMs)
      this.logger.info(
        { lease_ms: asked, stall_ms: Math.round(stallMs) },
        asked > this.leaseMs
          ? `this worker's event loop was held up for ${Math.round(stallMs)} ms at once: its lease is ${asked} ms while such stalls are recent`
          : `this worker's lease is ${asked} ms again: its event loop has not been held up for a minute`,
      );
    this.asked = asked;
    try {
      const joiningNames = joining.flatMap((h) => h.names);
      const reply = await this.redis.dirigentRenewLeases(
        this.workers,
        `${this.workers}:renewed`,
        asked,
        this.leaseMs,
        LAPSED_PER_RENEWAL,
        joiningNames.length,
        ...joiningNames,
        ...held.flatMap((h) => h.names),
      );
      for (const h of joining) this.joining.delete(h);
      const nextLapse = Number(reply[0]);
      const lostCount = Number(reply[1]);
      const lost = new Set(reply.slice(2, 2 + lostCount).map(String));
      const lapsed = reply.slice(2 + lostCount).map(String);
      for (const h of [...joining, ...held])
        if (this.holders.has(h))
          h.renewed(
            sent,
            h.names.filter((n) => lost.has(n)),
          );
      const now = Date.now();
      // A reply to a renewal sent before a pause says nothing of now: the next renewal will.
      if (now >= sent + this.leaseMs) nextInMs = 0;
      else {
        nextInMs = Math.max(0, sent + this.everyMs - now);
        // The moment the next lease of another worker lapses (by Redis's clock, which read it
        // before this reply came): look then, if it comes before the next renewal.
        if (nextLapse >= 0) nextInMs = Math.min(nextInMs, nextLapse + 1);
      }
      if (lapsed.length > 0) void this.takeOver(lapsed);
      this.failing = false;
    } catch (err) {
      // The next renewal tries again; writes to runs stay fenced meanwhile.
      const message = err instanceof Error ? err.message : String(err);
      if (!this.failing)
        this.logger.warn(
          { err: message },
          `could not renew this worker's lease in Redis: ${message}`,
        );
      this.failing = true;
    }
    if (this.holders.size > 0) this.schedule(nextInMs);
  }

  /** Takes over the work of lapsed leases, one batch at a time (renewals go on meanwhile). */
  private async takeOver(names: readonly string[]): Promise<void> {
    const [holder] = this.holders;
    if (this.reaping || holder === undefined) return;
    this.reaping = true;
    try {
      await holder.takeOver(names);
    } catch {
      // The next renewal finds the leases still lapsed and tries again.
    } finally {
      this.reaping = false;
    }
  }
}
