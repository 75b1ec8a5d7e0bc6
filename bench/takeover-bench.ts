/**
 * Takeover after SIGKILL: three `dirigent worker` processes with the default settings on a private
 * Redis hold long tool calls and runs; one worker at a time is killed with SIGKILL (and another
 * started), and the time until a live worker has taken its jobs over is read from the workers'
 * logs. Baseline: the same kill against plain BullMQ workers with their default lock and stalled
 * check, the recovery Dirigent had before workers kept leases. Beside it, what the leases cost:
 * the Redis commands of the same three workers while idle, per worker and second.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { DirectiveLoader } from '../src/engine/directive-loader.js';
import { ItemResolver } from '../src/items/item-resolver.js';
import { defaultSpaces } from '../src/items/space.js';
import { runSourceOf } from '../src/redis/run-source.js';
import { RunsClient } from '../src/redis/client/runs-client.js';
import {
  DEFAULT_WORKER_LEASE_MS,
  workerLeaseMs,
  workersKey,
} from '../src/redis/takeover/worker-lease.js';
import { renewEveryMs } from '../src/redis/takeover/lease-renewer.js';
import type { BenchRow } from './bench-row.js';
import { idleWorkerCommands, type IdleCommands } from './idle-worker-commands.js';
import type { BenchSection } from './bench-section.js';
import { PrivateRedis } from './local-redis/private-redis.js';
import { WorkerPool } from './chaos/worker-pool.js';
import { writeDirectiveFile } from './takeover-directive.js';

/** The goal: a dead worker's work moves within 2 s (p99), at the default settings. */
const GOAL_MS = 2000;

/**
 * Redis commands per idle worker and second before the leases were renewed by one script per
 * process and looked at when they lapse (a 3 s lease renewed every second by each of a worker's
 * two scripts of seven commands; three workers over 20 s, counted as {@link idleWorkerCommands}
 * counts). No run can measure it again, so it is a constant; the goal allows twice as many.
 */
const IDLE_COMMANDS_BEFORE = 19.3;
/** How long the idle workers' commands are counted, s. */
const IDLE_SECONDS = 20;

function quantile(xs: readonly number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Measures `kills` takeovers (and one BullMQ baseline) and reports them as a section. */
export async function takeoverBench(options: { kills: number }): Promise<BenchSection> {
  const root = mkdtempSync(join(tmpdir(), 'dirigent-takeover-bench-'));
  const redis = await PrivateRedis.start(root);
  try {
    const { times: dirigent, lapses, idle } = await dirigentTakeovers(root, redis, options.kills);
    const bullmq = await bullmqRecovery(redis);
    const p50 = quantile(dirigent, 0.5);
    const p99 = quantile(dirigent, 0.99);
    const row = (name: string, ms: number, comparison: string, met?: boolean): BenchRow => ({
      name,
      us: ms * 1000,
      range: [Math.min(...dirigent) * 1000, Math.max(...dirigent) * 1000],
      rate: 60_000 / ms,
      unit: 'takeovers/min',
      comparison,
      goal: met === undefined ? '' : `≤ ${GOAL_MS / 1000} s after the kill (p99)`,
      ...(met !== undefined && { met }),
    });
    return {
      title: 'Takeover after SIGKILL',
      rows: [
        row(
          `Dirigent: jobs of a killed worker taken over, p50 of ${dirigent.length} kills`,
          p50,
          `**${(bullmq / p50).toFixed(1)}×** sooner than BullMQ alone`,
        ),
        row(
          `… p99 of ${dirigent.length} kills`,
          p99,
          `**${(bullmq / p99).toFixed(1)}×** sooner than BullMQ alone`,
          p99 <= GOAL_MS,
        ),
        {
          ...row('BullMQ alone: a killed worker’s job taken up again', bullmq, 'baseline'),
          range: [bullmq * 1000, bullmq * 1000],
        },
        idleRow(idle),
      ],
      notes: [
        `Three \`dirigent worker\` processes with the default settings (${leaseSettings()}; BullMQ's lock 30 s) on a private Redis hold runs whose one step sleeps 20 s; one worker at a time is killed with SIGKILL and another started in its place. A takeover is timed from the kill to the first log line of a live worker saying it took the killed worker's jobs over (its tool calls failed as \`WORKER_LOST\` and retried, its run jobs back in the queue). The range column is the fastest and slowest of the ${dirigent.length} kills. Baseline: a plain BullMQ worker (default lock and stalled check, 30 s each) killed with SIGKILL while it holds a job, timed until another worker takes the job up, measured once.`,
        split(dirigent, lapses),
        `Idle cost: the same three workers, started and idle (no run yet), their commands counted by the private Redis over ${idle.seconds.toFixed(0)} s (\`INFO commandstats\`, which counts the commands scripts call too), per worker and second: ${idle.byCommand.map(([name, n]) => `${name} ${n.toFixed(2)}`).join(', ')}. The lease's script is the \`evalsha\` with \`time\`, \`set\`, \`zrange\` and \`zadd\` (4 a second); the rest is BullMQ's wait for jobs (\`bzpopmin\` and the script that follows each wait, for each of a worker's three BullMQ workers) and the pauses' refresh (\`smembers\`). The row's µs column is the mean time between two commands. Before: ${IDLE_COMMANDS_BEFORE} commands/s (lease 3 s, renewed every second by each of a worker's two scripts of seven commands), measured the same way; the goal allows twice that.`,
      ],
    };
  } finally {
    await redis.down();
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * Each takeover taken apart: how long after the kill the killed worker's lease lapsed (read from
 * the leases' sorted set at the kill: the lease that worker had last asked for, less the time
 * since it renewed), and the rest (a live worker noticing the lapse, moving the jobs, logging it).
 */
function split(times: readonly number[], lapses: readonly (number | undefined)[]): string {
  const known = times.flatMap((t, i) => (lapses[i] === undefined ? [] : [[t, lapses[i]!]]));
  if (known.length === 0) return "No killed worker's lease could be read at its kill.";
  const wait = known.map(([, l]) => l!);
  const rest = known.map(([t, l]) => t! - l!);
  const slowest = known.reduce((a, b) => (b[0]! > a[0]! ? b : a));
  const ms = (x: number) => `${Math.round(x)} ms`;
  return `Where a takeover's time goes (${known.length} kills): the killed worker's lease lapsed p50 ${ms(quantile(wait, 0.5))}, at most ${ms(Math.max(...wait))} after the kill (the lease it had asked for, less the time since its last renewal); noticing the lapse, moving the jobs and logging it took p50 ${ms(quantile(rest, 0.5))}, at most ${ms(Math.max(...rest))}. The slowest takeover, ${ms(slowest[0]!)}, spent ${ms(slowest[1]!)} of it waiting for the lease, ${slowest[1]! > DEFAULT_WORKER_LEASE_MS ? 'longer than the default lease: that worker had asked for a longer one, as a worker whose event loop stalled lately does' : 'within the default lease'}.`;
}

/** The lease settings of the defaults, in words. */
function leaseSettings(): string {
  const lease = workerLeaseMs({});
  return `lease ${lease / 1000} s, renewed every ${renewEveryMs(lease)} ms and looked at when it lapses`;
}

/** The row of the idle workers' commands. */
function idleRow(idle: IdleCommands): BenchRow {
  const rate = idle.perWorkerPerSecond;
  const bound = 2 * IDLE_COMMANDS_BEFORE;
  return {
    name: `Redis commands per idle worker per second (default lease ${DEFAULT_WORKER_LEASE_MS} ms, renewed every ${renewEveryMs(DEFAULT_WORKER_LEASE_MS)} ms)`,
    us: 1e6 / rate,
    range: [1e6 / rate, 1e6 / rate],
    rate,
    unit: 'commands/s',
    comparison: `**${(rate / IDLE_COMMANDS_BEFORE).toFixed(2)}×** the ${IDLE_COMMANDS_BEFORE}/s before (lease 3 s renewed every second)`,
    goal: `≤ ${bound.toFixed(1)}/s (2× before)`,
    met: rate <= bound,
  };
}

/**
 * The commands of the pool's workers while idle, then the takeover time of each of `kills` kills,
 * ms.
 */
async function dirigentTakeovers(
  root: string,
  redis: PrivateRedis,
  kills: number,
): Promise<{ times: number[]; lapses: (number | undefined)[]; idle: IdleCommands }> {
  const project = join(root, 'project');
  const file = writeDirectiveFile(project);
  const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: redis.url, DIRIGENT_PREFIX: 'tb' };
  delete env.DIRIGENT_LOCK_MS;
  delete env.DIRIGENT_WORKER_LEASE_MS;
  const pool = new WorkerPool(join(process.cwd(), 'dist', 'cli', 'main.js'), env, project, 3);
  const conn = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
  let client: RunsClient | undefined;
  try {
    await pool.start();
    // Counted before anything else talks to this Redis: the workers alone, after they settled.
    await new Promise((r) => setTimeout(r, 2000));
    const idle = await idleWorkerCommands(conn, pool.workers.length, IDLE_SECONDS);
    const runs = (client = new RunsClient(conn, 'tb'));
    const loaded = await new DirectiveLoader(project).loadFile(file);
    const source = await runSourceOf(loaded, new ItemResolver(defaultSpaces(project)));
    let n = 0;
    const more = (count: number) =>
      Promise.all(
        Array.from({ length: count }, () => runs.start(source, {}, { runId: `hold-${n++}` })),
      );
    await more(12);
    const times: number[] = [];
    const lapses: (number | undefined)[] = [];
    while (times.length < kills) {
      await more(3);
      await new Promise((r) => setTimeout(r, 1500)); // every worker holds some by now
      const slot = times.length % pool.workers.length;
      const leases = pool.workers[slot]?.leases ?? [];
      const killing = pool.kill(slot, 200);
      const at = Date.now();
      const lapse = lapseAfter(conn, leases);
      const took = await firstTakeover(pool, leases, at, 20_000);
      await killing;
      if (took !== undefined) {
        times.push(took - at);
        lapses.push(await lapse);
      }
    }
    return { times, lapses, idle };
  } finally {
    await pool.close();
    await client?.close();
    conn.disconnect();
  }
}

/** In how many ms the last of `leases` lapses, by Redis's clock (read at a kill). */
async function lapseAfter(redis: Redis, leases: string[]): Promise<number | undefined> {
  if (leases.length === 0) return undefined;
  const [[sec, usec], scores] = await Promise.all([
    redis.time(),
    redis.zmscore(workersKey('tb'), ...leases),
  ]);
  const lapses = scores.flatMap((s) => (s === null ? [] : [Number(s)]));
  if (lapses.length === 0) return undefined;
  return Math.max(...lapses) - (Number(sec) * 1000 + Number(usec) / 1000);
}

/** When a live worker first logged taking over jobs of one of `leases` after `since`. */
async function firstTakeover(pool: WorkerPool, leases: string[], since: number, within: number) {
  const deadline = Date.now() + within;
  while (Date.now() < deadline) {
    for (const line of pool.lines) {
      const m = /took over \d+ job\(s\) of worker (\S+?),/.exec(line);
      const time = Number(/"time":(\d+)/.exec(line)?.[1] ?? NaN);
      if (m && leases.includes(m[1]!) && time >= since) return time;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return undefined;
}

/** How long plain BullMQ takes to hand a killed worker's job to another, ms. */
async function bullmqRecovery(redis: PrivateRedis): Promise<number> {
  const conn = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
  const queue = new Queue('bench-stalled', { connection: conn, prefix: 'bs' });
  const script = `
    import { Worker } from 'bullmq';
    const w = new Worker('bench-stalled', async (job) => {
      console.log('took ' + job.id + ' ' + Date.now());
      await new Promise((r) => setTimeout(r, 120000));
    }, { connection: { host: '127.0.0.1', port: ${redis.port} }, prefix: 'bs' });
  `;
  const start = () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    return { child, out: () => out };
  };
  const first = start();
  const second = start();
  try {
    await queue.add('hold', {}, { jobId: 'held' });
    const taker = async () => {
      for (;;) {
        for (const w of [first, second]) if (w.out().includes('took held')) return w;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const holder = await taker();
    const other = holder === first ? second : first;
    const at = Date.now();
    holder.child.kill('SIGKILL');
    for (;;) {
      const m = /took held (\d+)/.exec(other.out());
      if (m) return Number(m[1]) - at;
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    first.child.kill('SIGKILL');
    second.child.kill('SIGKILL');
    await queue.close();
    conn.disconnect();
  }
}
