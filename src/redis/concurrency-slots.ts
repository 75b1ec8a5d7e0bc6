/**
 * The slots of run concurrency keys on Redis (see `engine/run-concurrency.ts`). Per directive and
 * key: `<prefix>:concurrency:<directive>:<key>:slots`, a sorted set of the runs holding a slot
 * (scored by when they took it), and `…:queue`, a list of the runs waiting for one, in start
 * order. A run waiting is a start job delayed far ahead (a safety net, never the way it wakes):
 * when a slot frees, the run that frees it hands it to the next of its key and promotes that
 * run's job, so the run starts at once.
 *
 * A slot can outlive its run only if the process that ended the run died before letting it go:
 * whenever a key has no free slot, the holders whose run has ended (or that never came to be
 * stored within {@link STALE_MS}) are let go first.
 */
import type { Queue } from 'bullmq';
import { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RunConcurrency } from '../engine/run-concurrency.js';

/** How long a start waiting for a slot stays delayed if no slot frees for it (a safety net). */
export const SLOT_WAIT_SAFETY_MS = 10 * 60_000;

/** How long a slot's holder may stay unstored before the slot is taken from it. */
const STALE_MS = 5 * 60_000;

/**
 * KEYS: slots, queue. ARGV: run id, limit, now (ms), the run hash prefix (`<prefix>:run:`),
 * stale ms. Answers `{'holds'}` when the run holds a slot already, `{'go', …}` when it took one,
 * `{'wait', …}` when it is (now) in the queue, each followed by the ids of queued runs that took
 * slots let go by ended holders (their jobs are to be promoted).
 */
const ADMIT = `
local slots, queue = KEYS[1], KEYS[2]
local runId, limit, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if redis.call('ZSCORE', slots, runId) then return 'holds' end
if redis.call('ZCARD', slots) >= limit then
  local holders = redis.call('ZRANGE', slots, 0, -1, 'WITHSCORES')
  for i = 1, #holders, 2 do
    local status = redis.call('HGET', ARGV[4] .. holders[i], 'status')
    local over = status == 'completed' or status == 'failed' or status == 'cancelled'
    if over or (not status and now - tonumber(holders[i + 1]) > tonumber(ARGV[5])) then
      redis.call('ZREM', slots, holders[i])
    end
  end
end
local out = {'wait'}
local held = redis.call('ZCARD', slots)
while held < limit do
  local id = redis.call('LPOP', queue)
  if not id then break end
  redis.call('ZADD', slots, now, id)
  held = held + 1
  out[#out + 1] = id
end
if held < limit then
  redis.call('ZADD', slots, now, runId)
  out[1] = 'go'
  return out
end
if redis.call('LPOS', queue, runId) == false then redis.call('RPUSH', queue, runId) end
return out
`;

/**
 * KEYS: slots, queue. ARGV: run id, limit, now. Lets the run's slot go and hands the free slots
 * to the next runs of the queue; answers their ids, in order.
 */
const RELEASE = `
local slots, queue = KEYS[1], KEYS[2]
local limit, now = tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREM', slots, ARGV[1])
local next = {}
local held = redis.call('ZCARD', slots)
while held < limit do
  local id = redis.call('LPOP', queue)
  if not id then break end
  redis.call('ZADD', slots, now, id)
  held = held + 1
  next[#next + 1] = id
end
return next
`;

type SlotCommands = Redis & {
  dirigentAdmitRun(...args: (string | number)[]): Promise<string[]>;
  dirigentReleaseSlot(...args: (string | number)[]): Promise<string[]>;
};

/** The slots of a deployment's concurrency keys (see the module comment). */
export class ConcurrencySlots {
  private readonly redis: SlotCommands;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    this.redis = redis as SlotCommands;
    if (typeof this.redis.dirigentAdmitRun !== 'function') {
      redis.defineCommand('dirigentAdmitRun', { numberOfKeys: 2, lua: ADMIT });
      redis.defineCommand('dirigentReleaseSlot', { numberOfKeys: 2, lua: RELEASE });
    }
  }

  /**
   * Takes a slot for the run (`go`), finds it holds one (`holds`), or queues it (`wait`). Slots
   * that ended holders had kept go to the runs queued first, whose jobs are promoted.
   */
  async admit(
    directive: string,
    c: RunConcurrency,
    runId: string,
    runsQueue: Queue,
  ): Promise<'holds' | 'go' | 'wait'> {
    const [slots, queue] = this.keys(directive, c.key);
    const [answer, ...woken] = await this.redis.dirigentAdmitRun(
      slots,
      queue,
      runId,
      c.limit,
      Date.now(),
      `${this.prefix}:run:`,
      STALE_MS,
    );
    for (const id of woken) await this.wake(directive, c, id, runsQueue);
    return answer as 'holds' | 'go' | 'wait';
  }

  /** Starts a run that took a slot: its delayed start job is promoted (or, gone, it lets go). */
  private async wake(
    directive: string,
    c: RunConcurrency,
    runId: string,
    runsQueue: Queue,
  ): Promise<void> {
    const job = await Job.fromId(runsQueue, runId);
    if (job === undefined) await this.release(directive, c, runId, runsQueue);
    else if ((await job.getState()) === 'delayed') await job.promote();
  }

  /**
   * Lets the run's slot go, and starts the runs of its key that take the slots freed: their
   * start jobs, delayed while they waited, are promoted.
   */
  async release(
    directive: string,
    c: RunConcurrency,
    runId: string,
    runsQueue: Queue,
  ): Promise<void> {
    const [slots, queue] = this.keys(directive, c.key);
    const next = await this.redis.dirigentReleaseSlot(slots, queue, runId, c.limit, Date.now());
    // A start whose job is gone (it was cancelled) gives its slot on at once.
    for (const id of next) await this.wake(directive, c, id, runsQueue);
  }

  private keys(directive: string, key: string): [string, string] {
    const base = `${this.prefix}:concurrency:${directive}:${encodeURIComponent(key)}`;
    return [`${base}:slots`, `${base}:queue`];
  }
}
