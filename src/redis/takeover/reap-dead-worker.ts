/**
 * Taking over a dead worker's jobs (see `worker-lease.ts`): once its lease has lapsed, one live
 * worker removes the lease (so no other does the same) and finds, in the dead worker's queue, the
 * active jobs whose BullMQ lock it held. A run job goes back to the wait list, where a live worker
 * takes it up and resumes the run from its store (claiming it: `run-claims.ts`). A tool call is
 * failed with `WORKER_LOST` (retryable), told to its caller like any outcome, so the step that
 * made it is retried under its retry policy: the lost call counts as an attempt.
 */
import { backToWait } from '../back-to-wait.js';
import { Job, type Queue } from 'bullmq';
import type { RedisClient } from '../redis-client.js';
import { workerLost } from '../../tools/worker-lost.js';
import { toJobError } from '../job-error.js';
import { QueueName } from '../queue-names.js';
import { replyToCaller } from '../tool-worker/reply-to-caller.js';
import type { RunJobData } from '../run-job.js';
import type { ToolJobData } from '../tool-job.js';
import type { Logger } from '../../telemetry/logger.js';
import { parseLeaseName, workersKey } from './worker-lease.js';

/**
 * KEYS: workers, the queue's active list. ARGV: the lapsed lease name, the queue's job key prefix,
 * the dead BullMQ worker's id. Removes the lease if it is still lapsed and answers the dead
 * worker's active jobs as `{jobId, lock token, …}`; answers nothing when the lease was renewed
 * or another worker removed it first.
 */
const REAP_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lapse = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not lapse or tonumber(lapse) > now then return {} end
redis.call('ZREM', KEYS[1], ARGV[1])
local mark = ARGV[3] .. ':'
local out = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  local token = redis.call('GET', ARGV[2] .. id .. ':lock')
  if token and string.sub(token, 1, #mark) == mark then
    out[#out + 1] = id
    out[#out + 1] = token
  end
end
return out
`;

interface ReapCommands {
  dirigentReapWorker(...args: string[]): Promise<string[]>;
}

/** What a reaper needs: the connection, the prefix, and the queues it may find jobs in. */
export interface ReapContext {
  redis: RedisClient;
  prefix: string;
  runs: () => Queue<RunJobData>;
  tools: () => Queue<ToolJobData>;
}

/** The jobs taken over from a dead worker. */
export interface Reaped {
  name: string;
  queue: string;
  jobIds: string[];
}

/**
 * Takes over the jobs of the worker whose lease `name` lapsed; resolves with them (none when
 * another worker got there first, or the lease was renewed meanwhile).
 */
export async function reapDeadWorker(ctx: ReapContext, name: string): Promise<Reaped> {
  const parsed = parseLeaseName(name);
  const none = { name, queue: parsed?.queue ?? '', jobIds: [] };
  if (parsed === undefined) {
    await ctx.redis.zrem(workersKey(ctx.prefix), name);
    return none;
  }
  const redis = ctx.redis as RedisClient & Partial<ReapCommands>;
  if (redis.dirigentReapWorker === undefined)
    ctx.redis.defineCommand('dirigentReapWorker', { numberOfKeys: 2, lua: REAP_SCRIPT });
  const { queue, workerId } = parsed;
  const reply = await (ctx.redis as RedisClient & ReapCommands).dirigentReapWorker(
    workersKey(ctx.prefix),
    `${ctx.prefix}:${queue}:active`,
    name,
    `${ctx.prefix}:${queue}:`,
    workerId,
  );
  const found: [jobId: string, token: string][] = [];
  for (let i = 0; i < reply.length; i += 2) found.push([reply[i]!, reply[i + 1]!]);
  // The jobs are taken over all at once: their commands share round trips (a dead worker's
  // dozens of run jobs cost a few round trips, not three each).
  const taken = await Promise.all(
    found.map(([jobId, token]) =>
      queue === QueueName.TOOLS
        ? failLostCall(ctx, jobId, token, workerId)
        : queue === QueueName.RUNS
          ? requeue(ctx, jobId, token)
          : false,
    ),
  );
  return { name, queue, jobIds: found.filter((_, i) => taken[i]).map(([jobId]) => jobId) };
}

/**
 * Takes over the jobs of every worker whose lease is named, tool calls first (a run taken up
 * again then finds its calls failed, not still running), and logs what it took.
 */
export async function takeOverDeadWorkers(
  ctx: ReapContext,
  names: readonly string[],
  log: Logger,
): Promise<void> {
  const tools = (name: string) => Number(name.startsWith(`${QueueName.TOOLS}/`));
  for (const name of [...names].sort((a, b) => tools(b) - tools(a))) {
    const { queue, jobIds } = await reapDeadWorker(ctx, name);
    if (jobIds.length > 0)
      log.info(
        { dead: name, queue, jobs: jobIds },
        `took over ${jobIds.length} job(s) of worker ${name}, whose lease lapsed`,
      );
  }
}

/** Puts a dead worker's run job back in the wait list. */
async function requeue(ctx: ReapContext, jobId: string, token: string): Promise<boolean> {
  const runs = ctx.runs();
  const job = await Job.fromId<RunJobData>(runs, jobId);
  if (job === undefined) return false;
  return backToWait(job, token, runs, ctx.redis).then(
    () => true,
    () => false, // finished or taken meanwhile
  );
}

/** Fails a dead worker's tool call with `WORKER_LOST` and tells its caller. */
async function failLostCall(
  ctx: ReapContext,
  jobId: string,
  token: string,
  workerId: string,
): Promise<boolean> {
  const job = await Job.fromId<ToolJobData>(ctx.tools(), jobId);
  if (job === undefined) return false;
  const error = workerLost(job.data, workerId);
  try {
    await job.moveToFailed(toJobError(error), token);
  } catch {
    return false; // finished or taken meanwhile
  }
  await replyToCaller(ctx.redis, ctx.prefix, job, { ok: false, error: error.toJSON() }, ctx.runs);
  return true;
}
