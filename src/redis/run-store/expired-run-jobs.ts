/**
 * The BullMQ job data of runs that are no longer kept. A run's jobs are named after it: its start
 * job is its id, its wake and redrive jobs `<id>.wake.<at>` and `<id>.redrive.<n>`, its tool jobs
 * `<id>.<call id>` (see `tool-job.ts`). Finished jobs are kept at most
 * {@link MAX_JOB_KEEP_SECONDS} (see `queue-options.ts`), less than the default retention, so
 * the jobs of most runs are gone before the runs are. For the others:
 *
 * - a run kept for less has an entry in `<prefix>:runs:jobs-due` (`<id>@<startedAt>`, scored by its
 *   expiry, written by the save script), and once its hash has expired its finished jobs are
 *   removed: those that finished after it started, found in each queue's `completed` and
 *   `failed` sets (scored by when they finished) and matched by id;
 * - BullMQ removes a job past its age only when another job of its queue finishes: in a queue
 *   gone idle, finished jobs older than {@link MAX_JOB_KEEP_SECONDS} are removed here.
 *
 * Signal and cancel jobs (numbered by BullMQ, not named after their run) leave at once when they
 * complete and are not matched; the queues' event streams keep their last 10,000 events.
 */
import type { RedisClient } from '../redis-client.js';
import { QueueName } from '../queue-names.js';
import { MAX_JOB_KEEP_SECONDS } from '../queue-options.js';

/** The queues whose jobs belong to runs. */
const RUN_QUEUES = [QueueName.RUNS, QueueName.TOOLS] as const;
/** The sets of finished jobs of a queue, scored by when each finished (epoch ms). */
const FINISHED = ['completed', 'failed'] as const;
/** Jobs are stamped by the clocks of the workers that finish them: this much earlier counts too. */
const CLOCK_SLACK_MS = 60_000;
/** Entries of a finished set read at a time. */
const PAGE = 1000;

/**
 * Removes finished jobs. KEYS[1]: a queue's `completed` or `failed` set. ARGV[1]: the queue's key
 * prefix (`<prefix>:<queue>:`), then job ids. A job still in the set (not retried meanwhile) is
 * removed with its keys, as BullMQ's `removeJobKeys` removes them. Answers how many were removed.
 */
const REMOVE_FINISHED_SCRIPT = `
local removed = 0
for i = 2, #ARGV do
  local id = ARGV[i]
  if redis.call('ZREM', KEYS[1], id) == 1 then
    local job = ARGV[1] .. id
    redis.call('DEL', job, job .. ':logs', job .. ':dependencies', job .. ':processed',
      job .. ':failed', job .. ':unsuccessful')
    removed = removed + 1
  end
end
return removed
`;

interface JobCommands {
  dirigentRemoveFinishedJobs(key: string, queuePrefix: string, ...ids: string[]): Promise<number>;
}

function withCommands(redis: RedisClient): RedisClient & JobCommands {
  const r = redis as RedisClient & Partial<JobCommands>;
  if (r.dirigentRemoveFinishedJobs === undefined)
    redis.defineCommand('dirigentRemoveFinishedJobs', {
      numberOfKeys: 1,
      lua: REMOVE_FINISHED_SCRIPT,
    });
  return redis as RedisClient & JobCommands;
}

/** What a prune removed of the runs' jobs. */
export interface JobsRemoved {
  /** Runs whose jobs were looked for (their retention is over). */
  runs: number;
  /** Finished jobs removed, of those runs and past their age. */
  jobs: number;
}

/**
 * Removes the finished jobs of at most `max` runs whose retention is over and whose jobs were
 * due to outlive them, then finished jobs past {@link MAX_JOB_KEEP_SECONDS} (at most `max` per
 * set). See the module comment.
 */
export async function removeExpiredRunJobs(
  redis: RedisClient,
  prefix: string,
  max = 1000,
): Promise<JobsRemoved> {
  const r = withCommands(redis);
  const [seconds, micros] = await redis.time();
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  const removed = await removeDue(r, prefix, now, max);
  for (const queue of RUN_QUEUES)
    for (const set of FINISHED) {
      const key = `${prefix}:${queue}:${set}`;
      const old = await redis.zrangebyscore(
        key,
        '-inf',
        now - MAX_JOB_KEEP_SECONDS * 1000,
        'LIMIT',
        0,
        max,
      );
      if (old.length > 0)
        removed.jobs += await r.dirigentRemoveFinishedJobs(key, `${prefix}:${queue}:`, ...old);
    }
  return removed;
}

/** The jobs of the runs due in `<prefix>:runs:jobs-due` whose hash has expired. */
async function removeDue(
  redis: RedisClient & JobCommands,
  prefix: string,
  now: number,
  max: number,
): Promise<JobsRemoved> {
  const dueKey = `${prefix}:runs:jobs-due`;
  const entries = await redis.zrangebyscore(dueKey, '-inf', now, 'LIMIT', 0, max);
  if (entries.length === 0) return { runs: 0, jobs: 0 };
  const exists = redis.pipeline();
  for (const entry of entries) exists.exists(`${prefix}:run:${runIdOf(entry)}`);
  const found = (await exists.exec()) ?? [];
  // A run still stored expires in a moment (clocks differ): the next prune has it.
  const gone = entries.filter((_, i) => found[i]?.[1] === 0);
  if (gone.length === 0) return { runs: 0, jobs: 0 };
  const runs = new Set(gone.map(runIdOf));
  const from =
    Math.min(...gone.map((e) => Number(e.slice(e.lastIndexOf('@') + 1)))) - CLOCK_SLACK_MS;
  let jobs = 0;
  for (const queue of RUN_QUEUES)
    for (const set of FINISHED) {
      const key = `${prefix}:${queue}:${set}`;
      const ids = await finishedJobsOf(redis, key, from, runs);
      for (let i = 0; i < ids.length; i += PAGE)
        jobs += await redis.dirigentRemoveFinishedJobs(
          key,
          `${prefix}:${queue}:`,
          ...ids.slice(i, i + PAGE),
        );
    }
  await redis.zrem(dueKey, ...gone);
  return { runs: gone.length, jobs };
}

/** The ids in finished set `key`, finished at or after `from`, of jobs of `runs`. */
async function finishedJobsOf(
  redis: RedisClient,
  key: string,
  from: number,
  runs: ReadonlySet<string>,
): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await redis.zrangebyscore(key, from, '+inf', 'LIMIT', offset, PAGE);
    for (const id of page) if (runs.has(runOfJob(id))) ids.push(id);
    if (page.length < PAGE) return ids;
  }
}

/** The run id of a `jobs-due` entry (`<id>@<startedAt>`). */
function runIdOf(entry: string): string {
  return entry.slice(0, entry.lastIndexOf('@'));
}

/** The run a job id names: all of it, or what comes before its first dot (run ids have none). */
export function runOfJob(jobId: string): string {
  const dot = jobId.indexOf('.');
  return dot === -1 ? jobId : jobId.slice(0, dot);
}
