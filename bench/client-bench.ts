/**
 * What a client sees: a program that starts many one-step runs through the library and waits for
 * each (`Dirigent.start`, then the handle's `wait`), served by one `dirigent worker` process,
 * against the same program on plain BullMQ (`queue.add`, then `job.waitUntilFinished` on a
 * `QueueEvents`), served by one plain BullMQ worker process, on the same Redis, in the same rounds.
 * Every run's record is checked (completed, its echo's output as sent) before a figure is kept.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import { Dirigent } from '../src/operations/dirigent.js';
import { QueueName } from '../src/redis/queue-names.js';
import { EAGER_SLOT_WAIT_MS } from '../src/redis/tool-worker/slot-waits.js';
import { connectRedis, pingRedis, redisDownMessage } from '../src/redis/redis-connection.js';
import type { RedisClient } from '../src/redis/redis-client.js';
import { benchRow } from './bench-row.js';
import type { BenchSection } from './bench-section.js';
import {
  CLI,
  cpuOf,
  deletePrefix,
  PLAIN_WORKER,
  redisCounters,
  redisOptionsOf,
  SectionProcesses,
  SOURCES_CLI,
  childEnv,
  stopAll,
  workersReady,
  type Served,
} from './bench-processes.js';
import { echoOneProject } from './echo-one-project.js';
import { median } from './median.js';
import { formatShares, profiledArgs, sharesInDir } from './process-profile.js';
import type { CpuShares } from './cpu-shares.js';

/** Goal: the client's rate of started-and-awaited runs at least half plain BullMQ's. */
export const CLIENT_GOAL = 0.5;

/** The plain worker's concurrency: as many as a `dirigent worker` drives runs at once, its default. */
const PLAIN_CONCURRENCY = 50;
/**
 * Runs (or jobs) started and awaited before the timing, on a fresh prefix: as many as are timed, so
 * that both sides are measured as a worker process that has been up a while (JIT-compiled).
 */
const WARM_UP = 3000;

/** The sides measured, each once per round. */
type Side = 'grouped' | 'alone' | 'bullmq';

/** One side's round: wall time and where the CPU and the Redis commands went, per run. */
interface Measured {
  us: number;
  clientUs: number;
  workerUs: number;
  redisUs: number;
  commands: number;
  /** Calls made as tool jobs per run (Dirigent's sides): those that found no slot here in time. */
  toolJobs: number;
}

/**
 * Runs `work` (which starts and awaits `runs`) and measures it: wall time, this process's CPU, the
 * worker process's and Redis's, Redis's commands, and the tool jobs completed under `prefix`, each
 * per run.
 */
async function measured(
  redis: RedisClient,
  prefix: string,
  worker: Served,
  runs: number,
  work: () => Promise<void>,
): Promise<Measured> {
  // Finished tool jobs are kept (10,000 at most, an hour): more than a side's runs.
  const toolsDone = `${prefix}:${QueueName.TOOLS}:completed`;
  const toolJobsBefore = await redis.zcard(toolsDone);
  const workerBefore = cpuOf(worker.child.pid) ?? 0;
  const redisBefore = await redisCounters(redis);
  const cpuBefore = process.cpuUsage();
  const t0 = performance.now();
  await work();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpuBefore);
  const redisAfter = await redisCounters(redis);
  const workerAfter = cpuOf(worker.child.pid) ?? 0;
  return {
    us: (ms * 1000) / runs,
    clientUs: (cpu.user + cpu.system) / runs,
    workerUs: ((workerAfter - workerBefore) * 1e6) / runs,
    redisUs: ((redisAfter.cpu - redisBefore.cpu) * 1e6) / runs,
    // Less the two INFO commands of the measurement itself.
    commands: (redisAfter.commands - redisBefore.commands - 1) / runs,
    toolJobs: ((await redis.zcard(toolsDone)) - toolJobsBefore) / runs,
  };
}

/**
 * Client-side start-and-wait throughput: `runs` one-step runs started at once through the library
 * and each awaited, with starts grouped (the default) and each start a job of its own
 * (`DIRIGENT_START_GROUP=1`), against `queue.add` + `waitUntilFinished` of as many no-op jobs.
 */
export async function clientBench(
  options: { rounds?: number; runs?: number; redisUrl?: string } = {},
): Promise<BenchSection> {
  const rounds = options.rounds ?? 3;
  const runs = options.runs ?? 3000;
  const url = options.redisUrl ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (!(await pingRedis(url, 3000))) throw new Error(redisDownMessage(url));
  const root = mkdtempSync(join(tmpdir(), 'dirigent-bench-client-'));
  const redis = connectRedis(url);
  const processes = new SectionProcesses();
  const base = childEnv();
  const bullmq = JSON.stringify(import.meta.resolve('bullmq'));
  writeFileSync(join(root, 'worker.mjs'), PLAIN_WORKER.replace('__BULLMQ__', bullmq));

  /** A side's worker arguments: under the profiler into `profileDir` when there is one. */
  const workerArgs = (args: string[], profileDir?: string) =>
    profileDir === undefined ? args : profiledArgs(profileDir, args);

  const dirigentSide = async (
    side: 'grouped' | 'alone',
    round: number | 'profiled',
    profileDir?: string,
  ): Promise<Measured> => {
    const prefix = `dirigent-bench-client:${randomUUID()}`;
    const project = echoOneProject(root, `${side}-${round}`);
    const env = { ...base, REDIS_URL: url, DIRIGENT_PREFIX: prefix };
    const cli = profileDir === undefined ? CLI : SOURCES_CLI;
    const worker = processes.serve(
      workerArgs([cli, 'worker', '--project', project], profileDir),
      env,
      project,
    );
    const group = process.env.DIRIGENT_START_GROUP;
    if (side === 'alone') process.env.DIRIGENT_START_GROUP = '1';
    else delete process.env.DIRIGENT_START_GROUP;
    const dirigent = await Dirigent.open({ project, redis: url, prefix });
    if (group === undefined) delete process.env.DIRIGENT_START_GROUP;
    else process.env.DIRIGENT_START_GROUP = group;
    const each = async (n: number) => {
      const run = await dirigent.start({ directive: 'echo-one', inputs: { n } });
      const record = await run.wait();
      const echoed = record.outputs?.n;
      if (record.status !== 'completed' || echoed !== n)
        throw new Error(`run ${record.runId} ended ${record.status} with ${String(echoed)}`);
    };
    try {
      await workersReady(redis, prefix, [QueueName.RUNS, QueueName.TOOLS], [worker]);
      await Promise.all(Array.from({ length: WARM_UP }, (_, n) => each(n)));
      return await measured(redis, prefix, worker, runs, async () => {
        await Promise.all(Array.from({ length: runs }, (_, n) => each(n)));
      });
    } finally {
      await dirigent.close();
      await stopAll([worker]);
      await deletePrefix(redis, prefix);
      rmSync(project, { recursive: true, force: true });
    }
  };

  const bullmqSide = async (profileDir?: string): Promise<Measured> => {
    const prefix = `dirigent-bench-client-plain:${randomUUID()}`;
    const queueName = 'bench-echo';
    const env = { ...base, BENCH_REDIS_OPTIONS: JSON.stringify(redisOptionsOf(url)) };
    const worker = processes.serve(
      workerArgs(
        [join(root, 'worker.mjs'), queueName, prefix, String(PLAIN_CONCURRENCY)],
        profileDir,
      ),
      env,
      root,
    );
    const connection = { ...redisOptionsOf(url), maxRetriesPerRequest: null };
    const queue = new Queue(queueName, { connection, prefix });
    // From the stream's start (the prefix is fresh): a QueueEvents reads from '$' once it has sent
    // its first read, which may come after it is ready, and a job ending before would be missed.
    const events = new QueueEvents(queueName, { connection, prefix, lastEventId: '0-0' });
    // Each wait listens on the queue for its closing: as many listeners as jobs in flight.
    queue.setMaxListeners(0);
    const each = async (n: number) => {
      // Completed jobs are kept (BullMQ's default), so that the wait's own look never misses one.
      const job = await queue.add('echo', { n });
      const result = (await job.waitUntilFinished(events)) as { n?: unknown };
      if (result.n !== n) throw new Error(`job ${job.id} returned ${JSON.stringify(result)}`);
    };
    try {
      await Promise.all([events.waitUntilReady(), queue.waitUntilReady()]);
      await workersReady(redis, prefix, [queueName], [worker]);
      await Promise.all(Array.from({ length: WARM_UP }, (_, n) => each(n)));
      return await measured(redis, prefix, worker, runs, async () => {
        await Promise.all(Array.from({ length: runs }, (_, n) => each(n)));
      });
    } finally {
      await Promise.all([queue.close(), events.close()]);
      await stopAll([worker]);
      await deletePrefix(redis, prefix);
    }
  };

  const sides: Side[] = ['grouped', 'alone', 'bullmq'];
  const results = new Map<Side, Measured[]>(sides.map((s) => [s, []]));
  /** Where each worker's CPU goes: a side run once more, untimed, its worker profiled. */
  const profiles = new Map<Side, { shares: CpuShares; runs: number }>();
  try {
    mkdirSync(root, { recursive: true });
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < sides.length; i++) {
        const side = sides[(round + i) % sides.length]!;
        const m = side === 'bullmq' ? await bullmqSide() : await dirigentSide(side, round);
        results.get(side)!.push(m);
      }
    }
    for (const side of sides) {
      const dir = join(root, `profile-${side}`);
      await (side === 'bullmq' ? bullmqSide(dir) : dirigentSide(side, 'profiled', dir));
      profiles.set(side, { shares: sharesInDir(dir), runs: WARM_UP + runs });
    }
  } finally {
    await processes.stop();
    redis.disconnect();
    rmSync(root, { recursive: true, force: true });
  }

  const of = (side: Side) => results.get(side)!;
  const us = (side: Side) => of(side).map((m) => m.us);
  // Per round, BullMQ's time per job over the side's time per run: the side's rate against it.
  const ratio = (side: Side) => median(of(side).map((m, r) => of('bullmq')[r]!.us / m.us));
  const where = (side: Side) => {
    const pick = (f: (m: Measured) => number) => median(of(side).map(f));
    const calls =
      side === 'bullmq'
        ? ''
        : `; ${Math.round(100 * pick((m) => m.toolJobs))}% of the calls made as tool jobs`;
    return `${pick((m) => m.us).toFixed(0)} µs wall, this process (the client) ${pick((m) => m.clientUs).toFixed(0)} µs of CPU, the worker process ${pick((m) => m.workerUs).toFixed(0)} µs, Redis ${pick((m) => m.redisUs).toFixed(0)} µs; ${pick((m) => m.commands).toFixed(1)} Redis commands${calls}`;
  };
  const row = (side: 'grouped' | 'alone', name: string) => {
    const r = ratio(side);
    return benchRow(name, us(side), 'runs/s', `**${r.toFixed(2)}×** plain BullMQ's rate`, {
      text: `≥ ${CLIENT_GOAL}× plain BullMQ`,
      met: () => r >= CLIENT_GOAL,
    });
  };
  const n = (x: number) => x.toLocaleString('en-US');
  const profiled = (side: Side) => {
    const { shares, runs: profiledRuns } = profiles.get(side)!;
    return `${((shares.totalMs * 1000) / profiledRuns).toFixed(0)} µs of its main thread per ${side === 'bullmq' ? 'job' : 'run'} (start-up and warm-up included): ${formatShares(shares)}`;
  };
  const cpuPerRun = (side: Side) =>
    median(of(side).map((m) => m.clientUs + m.workerUs + m.redisUs));
  // With every process busy, the cores allow at most this rate: the rate's ceiling against BullMQ's.
  const cpuCeiling = cpuPerRun('bullmq') / cpuPerRun('grouped');
  const aloneCeiling = cpuPerRun('bullmq') / cpuPerRun('alone');
  const workerShare = median(
    of('grouped').map((m) => m.workerUs / (m.clientUs + m.workerUs + m.redisUs)),
  );
  return {
    title: 'What a client sees: runs started through the library and awaited',
    rows: [
      row(
        'grouped',
        `Dirigent: ${n(runs)} one-step runs, each \`dirigent.start\` then \`run.wait()\`, all at once, one \`dirigent worker\` process, per run`,
      ),
      row(
        'alone',
        `… each start a job of its own (\`DIRIGENT_START_GROUP=1\`, as a CLI or API start made alone is), per run`,
      ),
      benchRow(
        `BullMQ: ${n(runs)} no-op jobs, each \`queue.add\` then \`job.waitUntilFinished(queueEvents)\`, all at once, one worker process (concurrency ${PLAIN_CONCURRENCY}), per job`,
        us('bullmq'),
        'jobs/s',
      ),
    ],
    notes: [
      `${rounds} rounds, the three sides taking turns going first, on the machine's Redis (${url.replace(/\/\/[^@]*@/, '//')}), each side of each round on a fresh key prefix, deleted afterwards, with a fresh worker process, warmed by ${WARM_UP} runs (jobs) before the timing. This process is the client only: \`Dirigent.open\` on Redis, or a BullMQ \`Queue\` and \`QueueEvents\`. The worker is \`dirigent worker --project <dir>\` with its defaults (50 runs and 8 tool calls at once, calls made in process when a slot is free or frees within ${EAGER_SLOT_WAIT_MS} ms), or a plain BullMQ \`Worker\` (concurrency ${PLAIN_CONCURRENCY}) whose processor returns the job's data. The directive is one step calling \`dirigent/util/echo\` with \`n\` from the input; each record is checked (completed, the echo's \`n\` as sent), each job's return value too. Client, worker and Redis share ${cpus().length} cores.`,
      `Where the time goes, per run (medians over rounds): grouped starts ${where('grouped')}; each start alone ${where('alone')}; BullMQ, per job, ${where('bullmq')}. Redis commands are \`total_commands_processed\` over the timing, every client's (the worker's background polls and lease renewals included), those that scripts run counted too. A call is made in the worker's process when one of its tool slots (8) is free or frees within ${EAGER_SLOT_WAIT_MS} ms, else it goes to the tools queue as a job, which a worker takes when a slot frees: with 50 runs under way at once, that is the share of calls made as tool jobs above (about 40% before calls waited for a slot; a run then took about 75 Redis commands).`,
      `What bounds the rate: client, worker and Redis together spend ${(1 / cpuCeiling).toFixed(1)}× BullMQ's CPU per run (${cpuPerRun('grouped').toFixed(0)} µs against ${cpuPerRun('bullmq').toFixed(0)} µs), so with the cores busy the grouped side's rate cannot pass ${cpuCeiling.toFixed(2)}× BullMQ's (each start alone: ${aloneCeiling.toFixed(2)}×); the worker spends ${Math.round(100 * workerShare)}% of it. Where the worker's main thread goes, by V8's sampling profiler (each side run once more, untimed, its worker profiled with \`node --cpu-prof\`, the CLI as tsc built it so that each file names its folder; self time): Dirigent's worker, starts grouped, ${profiled('grouped')}; each start alone, ${profiled('alone')}; the plain BullMQ worker ${profiled('bullmq')}. A run costs the worker what a job costs BullMQ's (taking and completing the group's job, shared by up to 50 runs) plus the engine (an xstate actor made and stepped, inputs and outputs evaluated), the call, and the run's record written with its indexes and feed; each start alone, a whole job more per run (added, taken and completed); a call made as a tool job, that job (added, taken, finished: about 28 Redis commands in its scripts) and a second save of its run. What would move the bound is less of that work per run, and less garbage from it (the parts above other than bullmq and ioredis): the queue's own part is BullMQ's.`,
    ],
  };
}
