/**
 * The processes a benchmark starts beside itself: `dirigent worker` processes (the built CLI) and
 * plain BullMQ workers, readiness, stopping them by pid, and what they and Redis spent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import type { RedisClient } from '../src/redis/redis-client.js';
import { queueOptions } from '../src/redis/queue-options.js';

/** The built CLI, as `npm run build` makes it. */
export const CLI = fileURLToPath(new URL('../cli/main.js', import.meta.url));
/** The same CLI as tsc built it, one file per module (`dist/src/cli/main.js`): for profiles. */
export const SOURCES_CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
/** Linux's USER_HZ: the unit of /proc/<pid>/stat's CPU times. */
const CLOCK_TICKS = 100;

/** A plain BullMQ worker process: its processor echoes the job's data (imports only bullmq). */
export const PLAIN_WORKER = `import { Worker } from __BULLMQ__;
const [queueName, prefix, concurrency] = process.argv.slice(2);
const connection = { ...JSON.parse(process.env.BENCH_REDIS_OPTIONS), maxRetriesPerRequest: null };
const worker = new Worker(queueName, async (job) => job.data, {
  connection,
  prefix,
  concurrency: Number(concurrency),
});
worker.on('error', (err) => process.stderr.write(String(err) + '\\n'));
await worker.waitUntilReady();
process.stdout.write('ready\\n');
process.once('SIGTERM', () => void worker.close().then(() => process.exit(0)));
`;

/** A child process that serves jobs until it is told to stop (SIGTERM), then killed if need be. */
export interface Served {
  child: ChildProcess;
  log: () => string;
}

/** Starts `node args` in `cwd`, keeping the last 8,000 characters of its output. */
export function serve(args: string[], env: NodeJS.ProcessEnv, cwd: string): Served {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (s: string) => (log = (log + s).slice(-8000));
  child.stdout!.setEncoding('utf8').on('data', keep);
  child.stderr!.setEncoding('utf8').on('data', keep);
  return { child, log: () => log };
}

/** Stops the processes this section started, by their pid: SIGTERM, SIGKILL after 10 s. */
export async function stopAll(served: readonly Served[]): Promise<void> {
  await Promise.all(
    served.map(async ({ child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }),
  );
}

/** Waits until `count` workers take jobs from each of `queues` (BullMQ's client names). */
export async function workersReady(
  redis: RedisClient,
  prefix: string,
  queues: readonly string[],
  served: readonly Served[],
): Promise<void> {
  const handles = queues.map((q) => new Queue(q, queueOptions(redis, prefix)));
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const dead = served.find((s) => s.child.exitCode !== null);
      if (dead) throw new Error(`a worker process exited: ${dead.log()}`);
      const counts = await Promise.all(handles.map((h) => h.getWorkersCount()));
      if (counts.every((c) => c >= served.length)) return;
      if (Date.now() > deadline)
        throw new Error(`workers not ready: ${served.map((s) => s.log()).join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await Promise.all(handles.map((h) => h.close()));
  }
}

/** Deletes every key under `prefix`. */
export async function deletePrefix(redis: RedisClient, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}

/** ioredis options of a redis:// URL, for the plain BullMQ scripts (which import only bullmq). */
export function redisOptionsOf(url: string): Record<string, unknown> {
  const u = new URL(url);
  const db = Number(u.pathname.slice(1) || 0);
  return {
    host: u.hostname || '127.0.0.1',
    port: Number(u.port || 6379),
    ...(u.username && { username: decodeURIComponent(u.username) }),
    ...(u.password && { password: decodeURIComponent(u.password) }),
    ...(db > 0 && { db }),
    ...(u.protocol === 'rediss:' && { tls: {} }),
  };
}

/** CPU seconds (user + system) a live process has used so far, from /proc; else undefined. */
export function cpuOf(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command's name in parentheses: state is field 3, utime 14 and stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** Redis's own CPU seconds and the commands it has served, so far. */
export async function redisCounters(
  redis: RedisClient,
): Promise<{ cpu: number; commands: number }> {
  const info = await redis.info();
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1]);
  return {
    cpu: field('used_cpu_user') + field('used_cpu_sys'),
    commands: field('total_commands_processed'),
  };
}

/**
 * The processes one section starts: each killed should this process die on the way, all stopped
 * by {@link stop}.
 */
export class SectionProcesses {
  private readonly served: Served[] = [];
  private readonly kill = () => this.served.forEach((s) => s.child.kill('SIGKILL'));

  constructor() {
    process.once('exit', this.kill);
  }

  /** Starts `node args` (see {@link serve}) and keeps it. */
  serve(args: string[], env: NodeJS.ProcessEnv, cwd: string): Served {
    const served = serve(args, env, cwd);
    this.served.push(served);
    return served;
  }

  /** Stops every process started here, by its pid. */
  async stop(): Promise<void> {
    await stopAll(this.served);
    process.off('exit', this.kill);
  }
}

/** This process's environment, less the settings a section gives its children itself. */
export function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.REDIS_URL;
  delete env.DIRIGENT_PREFIX;
  delete env.DIRIGENT_START_GROUP;
  return env;
}
