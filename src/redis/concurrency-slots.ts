/**
 * The slots of run concurrency keys on Redis (see `engine/run-concurrency.ts`). Per directive and
 * key, at the global key `concurrency` of `<directive>:<key>` (`shards/shard-layout.ts`):
 * `…:slots`, a sorted set of the runs holding a slot (scored by when they took it), and `…:queue`,
 * a list of the runs waiting for one, in start order. A run waiting is a start job delayed far ahead (a safety net, never the way it wakes):
 * when a slot frees, the run that frees it hands it to the next of its key and promotes that
 * run's job, so the run starts at once.
 *
 * A slot can outlive its run only if the process that ended the run died before letting it go:
 * whenever a key has no free slot, the holders whose run has ended (or that never came to be
 * stored within {@link STALE_MS}) are let go first. Their runs may live on any shard: the admit
 * script answers who holds the slots, and this process reads their status and admits again.
 */
import { quiet } from './redis-connection.js';
import { Job, Queue } from 'bullmq';
import type { RedisClient } from './redis-client.js';
import { QueueName } from './queue-names.js';
import { queueOptions } from './queue-options.js';
import type { ShardLayout } from './shards/shard-layout.js';
import type { RunConcurrency } from '../engine/run-concurrency.js';

/** How long a start waiting for a slot stays delayed if no slot frees for it (a safety net). */
export const SLOT_WAIT_SAFETY_MS = 10 * 60_000;

/** How long a slot's holder may stay unstored before the slot is taken from it. */
const STALE_MS = 5 * 60_000;

/**
 * KEYS: slots, queue. ARGV: run id, limit, now (ms), `checked`, then the holders to let go (their
 * runs have ended). Answers `{'holds'}` when the run holds a slot already; `{'full', id, score,
 * …}` (the holders) when no slot is free and the holders were not `checked` yet; else `{'go', …}`
 * when it took one, `{'wait', …}` when it is (now) in the queue, each followed by the ids of
 * queued runs that took slots let go (their jobs are to be promoted).
 */
const ADMIT = `
local slots, queue = KEYS[1], KEYS[2]
local runId, limit, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if redis.call('ZSCORE', slots, runId) then return {'holds'} end
for i = 5, #ARGV do redis.call('ZREM', slots, ARGV[i]) end
if ARGV[4] == '0' and redis.call('ZCARD', slots) >= limit then
  local out = redis.call('ZRANGE', slots, 0, -1, 'WITHSCORES')
  table.insert(out, 1, 'full')
  return out
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

type SlotCommands = RedisClient & {
  dirigentAdmitRun(...args: (string | number)[]): Promise<string[]>;
  dirigentReleaseSlot(...args: (string | number)[]): Promise<string[]>;
};

/** The slots of a deployment's concurrency keys (see the module comment). */
export class ConcurrencySlots {
  private readonly redis: SlotCommands;
  /** The runs queues of the shards whose runs were woken, by prefix. */
  private readonly queues = new Map<string, Queue>();

  constructor(
    redis: RedisClient,
    private readonly layout: ShardLayout,
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
  ): Promise<'holds' | 'go' | 'wait'> {
    const [slots, queue] = this.keys(directive, c.key);
    const ask = (checked: boolean, letGo: string[]) =>
      this.redis.dirigentAdmitRun(
        slots,
        queue,
        runId,
        c.limit,
        Date.now(),
        checked ? 1 : 0,
        ...letGo,
      );
    let [answer, ...rest] = await ask(false, []);
    if (answer === 'full') {
      [answer, ...rest] = await ask(true, await this.ended(rest));
    }
    for (const id of rest) await this.wake(directive, c, id);
    return answer as 'holds' | 'go' | 'wait';
  }

  /** Of holders given as `id, score, …`, those whose run has ended or never came to be stored. */
  private async ended(holders: string[]): Promise<string[]> {
    const now = Date.now();
    const pairs: [string, number][] = [];
    for (let i = 0; i < holders.length; i += 2) pairs.push([holders[i]!, Number(holders[i + 1])]);
    const statuses = await Promise.all(
      pairs.map(([id]) => this.redis.hget(`${this.layout.prefixOf(id)}:run:${id}`, 'status')),
    );
    return pairs.flatMap(([id, since], i) => {
      const status = statuses[i];
      const over = status === 'completed' || status === 'failed' || status === 'cancelled';
      return over || (status === null && now - since > STALE_MS) ? [id] : [];
    });
  }

  /** Starts a run that took a slot: its delayed start job is promoted (or, gone, it lets go). */
  private async wake(directive: string, c: RunConcurrency, runId: string): Promise<void> {
    const job = await Job.fromId(this.runsQueueOf(runId), runId);
    if (job === undefined) await this.release(directive, c, runId);
    else if ((await job.getState()) === 'delayed') await job.promote();
  }

  /**
   * Lets the run's slot go, and starts the runs of its key that take the slots freed: their
   * start jobs, delayed while they waited, are promoted.
   */
  async release(directive: string, c: RunConcurrency, runId: string): Promise<void> {
    const [slots, queue] = this.keys(directive, c.key);
    const next = await this.redis.dirigentReleaseSlot(slots, queue, runId, c.limit, Date.now());
    // A start whose job is gone (it was cancelled) gives its slot on at once.
    for (const id of next) await this.wake(directive, c, id);
  }

  /** Closes the queues opened to wake runs. */
  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
  }

  private runsQueueOf(runId: string): Queue {
    const prefix = this.layout.prefixOf(runId);
    let queue = this.queues.get(prefix);
    if (queue === undefined)
      this.queues.set(
        prefix,
        (queue = quiet(new Queue(QueueName.RUNS, queueOptions(this.redis, prefix)))),
      );
    return queue;
  }

  private keys(directive: string, key: string): [string, string] {
    const base = this.layout.globalKey('concurrency', `${directive}:${encodeURIComponent(key)}`);
    return [`${base}:slots`, `${base}:queue`];
  }
}
