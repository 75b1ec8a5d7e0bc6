/**
 * Operating runs on a Redis deployment: a bulk cancel (`Dirigent.bulk`) of thousands of waiting
 * runs against the same cancels scripted the plain way with the library (every page listed, then
 * `cancel(id)` a few at a time), and runs under a concurrency key (one at a time per key, many
 * keys) against the same runs without one. Two `dirigent worker` processes with the default
 * settings serve a private Redis; this process is only the client, so its memory is the client's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Redis } from 'ioredis';
import type { RunRecord } from '../src/engine/run-record.js';
import { Dirigent } from '../src/operations/dirigent.js';
import type { BulkReport } from '../src/operations/bulk-action.js';
import { benchRow, withinRounds } from './bench-row.js';
import type { BenchSection } from './bench-section.js';
import { PrivateRedis } from './local-redis/private-redis.js';
import { median } from './median.js';

/** The sizes measured. */
export interface OperateOptions {
  /** Rounds of each measurement, the side that goes first turning each round. */
  rounds: number;
  /** Waiting runs cancelled by each side (the bulk action, the plain script). */
  cancels: number;
  /** Runs of the concurrency measurement, per side. */
  keyedRuns: number;
  /** Concurrency keys the keyed runs are spread over (limit 1 each). */
  keys: number;
}

/** Worker processes serving the deployment. */
const WORKERS = 2;
/** Runs the plain script cancels at once (as many as a bulk action acts on at once). */
const AT_ONCE = 16;
/** The plain script's page size (the largest a list gives). */
const LIST_PAGE = 1000;
/**
 * Waiting runs of the warm-up, cancelled in bulk before anything is timed: more than the 1,000
 * runs whose fields the client's run store keeps once it has read them (`WrittenRuns`), so that
 * the side measured first does not pay for filling that cache, in time or in memory.
 */
const WARM = 1_100;
const PREFIX = 'op';
/** Clock ticks per second of `/proc/<pid>/stat` (`getconf CLK_TCK`, 100 on Linux). */
const CLOCK_TICKS = 100;
const MB = 1024 * 1024;

/** Measures both parts on one private Redis and two worker processes; one section. */
export async function operateBench(options: OperateOptions): Promise<BenchSection> {
  // On a memory file system where there is one: the private Redis syncs its append-only file at
  // every write, which would time the disk rather than Dirigent.
  const root = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'dirigent-op-'));
  const project = join(root, 'project');
  writeDirectives(project);
  const redis = await PrivateRedis.start(root);
  const conn = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
  const workers: WorkerProcess[] = [];
  let dirigent: Dirigent | undefined;
  try {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      REDIS_URL: redis.url,
      DIRIGENT_PREFIX: PREFIX,
    };
    delete env.DIRIGENT_LOCK_MS;
    delete env.DIRIGENT_WORKER_LEASE_MS;
    for (let i = 0; i < WORKERS; i++) workers.push(await WorkerProcess.start(env, project));
    dirigent = await Dirigent.open({ project, redis: redis.url, prefix: PREFIX });
    const rig: Rig = { dirigent, redis: conn, workers };
    const idle = await idleCommandRate(conn);
    const cancel = await cancelPart(rig, options.cancels, options.rounds);
    const keyed = await keyedPart(rig, options);
    return section(options, cancel, keyed, idle);
  } catch (err) {
    const logs = workers.map((w, i) => `worker ${i}:\n${w.lastLines.join('\n')}`).join('\n');
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${logs}`, { cause: err });
  } finally {
    await dirigent?.close();
    await Promise.all(workers.map((w) => w.stop()));
    conn.disconnect();
    await redis.down();
    rmSync(root, { recursive: true, force: true });
  }
}

// ---- the project ----

function writeDirectives(project: string): void {
  const dir = join(project, '.ai', 'directives');
  mkdirSync(dir, { recursive: true });
  const write = (name: string, body: string) =>
    writeFileSync(
      join(dir, `${name}.md`),
      `# ${name}\n\n\`\`\`xml\n<directive name="${name}" version="1.0.0">${body}</directive>\n\`\`\`\n`,
    );
  // Two directives alike: the bulk action and the plain script each cancel the runs of one.
  const held = `<process><step name="hold"><wait signal="go"/></step></process>`;
  write('held-bulk', held);
  write('held-plain', held);
  write('held-warm', held);
  const inputs = `<inputs><input name="customer" type="string" required="true"/></inputs>`;
  const step = `<process><step name="note"><render>Hello \${inputs.customer}.</render></step></process>`;
  write(
    'keyed',
    `<metadata><concurrency key="\${inputs.customer}" limit="1"/></metadata>${inputs}${step}`,
  );
  write('unkeyed', `${inputs}${step}`);
}

// ---- the worker processes ----

/** A `dirigent worker` process with the default settings; only the last lines of its log kept. */
class WorkerProcess {
  private constructor(
    private readonly child: ChildProcess,
    private readonly tail: string[],
  ) {}

  static async start(env: NodeJS.ProcessEnv, project: string): Promise<WorkerProcess> {
    const cli = join(process.cwd(), 'dist', 'cli', 'main.js');
    const child = spawn(process.execPath, [cli, 'worker', '--project', project], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    // The last lines only: the client's memory is measured, and must not hold the workers' logs.
    const tail: string[] = [];
    let rest = '';
    await new Promise<void>((served, failed) => {
      child.stderr!.on('data', (c: Buffer) => {
        rest += c.toString();
        const lines = rest.split('\n');
        rest = lines.pop()!;
        for (const line of lines) {
          tail.push(line);
          if (tail.length > 20) tail.shift();
          if (line.includes('jobs from')) served();
        }
      });
      child.once('exit', (code) =>
        failed(new Error(`dirigent worker exited (${code}): ${tail.join('\n')}`)),
      );
    });
    return new WorkerProcess(child, tail);
  }

  /** SIGTERM (it drains), SIGKILL after 10 s. */
  async stop(): Promise<void> {
    const { child } = this;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(t);
  }

  /** CPU time the process has used so far, µs (NaN where `/proc` cannot tell). */
  cpuUs(): number {
    try {
      const stat = readFileSync(`/proc/${this.child.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
    } catch {
      return NaN;
    }
  }

  /** What it logged last. */
  get lastLines(): readonly string[] {
    return this.tail;
  }
}

// ---- measuring ----

/** `global.gc`, exposed if the process was started without `--expose-gc`. */
const gc: () => void =
  (globalThis as { gc?: () => void }).gc ??
  (() => {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  })();

/** The live heap after a full collection, bytes. */
function liveHeap(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

/** Calls of each command so far (`INFO commandstats`; commands inside scripts included). */
async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info('commandstats');
  const calls = new Map<string, number>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(m[1]!, Number(m[2]));
  return calls;
}

async function commandsProcessed(redis: Redis): Promise<number> {
  const info = await redis.info('stats');
  return Number(/^total_commands_processed:(\d+)/m.exec(info)?.[1] ?? NaN);
}

/** Commands per second the server processes with the workers idle (their polls and leases). */
async function idleCommandRate(redis: Redis): Promise<number> {
  await sleep(1000);
  const c0 = await commandsProcessed(redis);
  const t0 = performance.now();
  await sleep(3000);
  return ((await commandsProcessed(redis)) - c0) / ((performance.now() - t0) / 1000);
}

/** The deployment measured, and the client that acts on it. */
interface Rig {
  dirigent: Dirigent;
  /** A connection of the bench's own, for `INFO`. */
  redis: Redis;
  workers: readonly WorkerProcess[];
}

/** CPU time used so far, µs: the Redis server's, the worker processes', this process's. */
async function cpuNow(rig: Rig): Promise<{ redis: number; workers: number; client: number }> {
  const info = await rig.redis.info('cpu');
  const field = (name: string) =>
    Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  const own = process.cpuUsage();
  return {
    redis: (field('used_cpu_user') + field('used_cpu_sys')) * 1e6,
    workers: rig.workers.reduce((sum, w) => sum + w.cpuUs(), 0),
    client: own.user + own.system,
  };
}

/** What an action cost: its time, the server's commands, CPU, and this process's memory. */
interface Cost<T> {
  value: T;
  ms: number;
  /** Commands the server processed over the action. */
  commands: number;
  /** Calls of each command over the action. */
  byCommand: Map<string, number>;
  /** CPU time over the action, µs. */
  cpu: { redis: number; workers: number; client: number };
  /** Live heap (after a full collection) at its highest during the action, above before, bytes. */
  heapPeak: number;
  /** Live heap after the action, above before, bytes. */
  heapAfter: number;
  /** Resident set size after, above before, bytes. */
  rss: number;
}

/**
 * Times `work`, counting every command the server processed meanwhile (this client's, the
 * workers', and those inside Lua scripts) and the CPU each process used; `work` calls `sample` at
 * points where the live heap is to be read (each a full collection).
 */
async function costOf<T>(rig: Rig, work: (sample: () => void) => Promise<T>): Promise<Cost<T>> {
  const { redis } = rig;
  const heap0 = liveHeap();
  const rss0 = process.memoryUsage().rss;
  let peak = heap0;
  const sample = () => void (peak = Math.max(peak, liveHeap()));
  const calls0 = await commandCalls(redis);
  const cpu0 = await cpuNow(rig);
  const c0 = await commandsProcessed(redis);
  const t0 = performance.now();
  const value = await work(sample);
  const ms = performance.now() - t0;
  // Less the INFO commands the measurement itself sent.
  const commands = (await commandsProcessed(redis)) - c0 - 1;
  const cpu1 = await cpuNow(rig);
  const byCommand = new Map<string, number>();
  for (const [name, calls] of await commandCalls(redis))
    byCommand.set(name, calls - (calls0.get(name) ?? 0));
  byCommand.set('info', (byCommand.get('info') ?? 0) - 5);
  const heapAfter = liveHeap() - heap0;
  return {
    value,
    ms,
    commands,
    byCommand,
    cpu: {
      redis: cpu1.redis - cpu0.redis,
      workers: cpu1.workers - cpu0.workers,
      client: cpu1.client - cpu0.client,
    },
    heapPeak: Math.max(peak - heap0, heapAfter),
    heapAfter,
    rss: process.memoryUsage().rss - rss0,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `done` every `everyMs` until it holds, or throws after `withinMs`. */
async function until(
  what: string,
  done: () => Promise<boolean>,
  withinMs = 120_000,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`operate bench: ${what} not within ${withinMs} ms`);
    await sleep(everyMs);
  }
}

// ---- part 1: bulk cancel against the plain script ----

interface CancelFigures {
  /** Seconds to start and park the runs of every round. */
  setupS: number;
  /** One per round. */
  dry: Cost<BulkReport>[];
  bulk: Cost<BulkReport>[];
  plain: Cost<number>[];
}

async function cancelPart(rig: Rig, n: number, rounds: number): Promise<CancelFigures> {
  const { dirigent } = rig;
  const filter = (directive: string) => ({ directive, status: 'waiting' as const });
  // Warm-up (untimed): the paths of both sides taken once, so that neither pays for first use.
  await startWaiting(dirigent, 'held-warm', WARM, WARM);
  await dirigent.bulk({ action: 'cancel', filter: filter('held-warm'), dryRun: true });
  await dirigent.bulk({ action: 'cancel', filter: filter('held-warm') });
  const f: CancelFigures = { setupS: 0, dry: [], bulk: [], plain: [] };
  for (let round = 0; round < rounds; round++) {
    const t0 = performance.now();
    await startWaiting(dirigent, 'held-bulk', n, n);
    await startWaiting(dirigent, 'held-plain', n, 2 * n);
    f.setupS += (performance.now() - t0) / 1000;

    const dry = await costOf(rig, () =>
      dirigent.bulk({ action: 'cancel', filter: filter('held-bulk'), dryRun: true }),
    );
    if (dry.value.matched !== n) throw new Error(`dry run matched ${dry.value.matched}, not ${n}`);
    f.dry.push(dry);
    const bulk = async () => {
      const cost = await costOf(rig, (sample) =>
        dirigent.bulk({
          action: 'cancel',
          filter: filter('held-bulk'),
          actionId: `bench-cancel-${round}`,
          onProgress: sample,
        }),
      );
      const r = cost.value;
      if (r.acted !== n || r.failed !== 0)
        throw new Error(
          `bulk cancel: ${r.acted} acted, ${r.skipped} skipped, ${r.failed} failed of ${n}` +
            (r.failures[0] ? ` (${r.failures[0].code}: ${r.failures[0].message})` : ''),
        );
      f.bulk.push(cost);
    };
    const plain = async () => {
      const cost = await costOf(rig, (sample) =>
        plainCancel(dirigent, filter('held-plain'), sample),
      );
      if (cost.value !== n) throw new Error(`plain script cancelled ${cost.value} of ${n}`);
      f.plain.push(cost);
    };
    // The side that goes first turns each round.
    for (const side of round % 2 === 0 ? [bulk, plain] : [plain, bulk]) await side();
    const left = (await dirigent.runs.counts()).byStatus.waiting;
    if (left !== 0) throw new Error(`${left} runs still waiting after both cancels`);
  }
  return f;
}

/**
 * The cancels as a user would script them with the library: every page listed first (the ids
 * kept), then `cancel(id)` {@link AT_ONCE} at a time. Resolves with how many it cancelled.
 */
async function plainCancel(
  dirigent: Dirigent,
  filter: { directive: string; status: 'waiting' },
  sample: () => void,
): Promise<number> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await dirigent.list({ ...filter, limit: LIST_PAGE, ...(cursor && { cursor }) });
    ids.push(...page.runs.map((run) => run.runId));
    cursor = page.next;
  } while (cursor !== undefined);
  sample();
  let cancelled = 0;
  for (let i = 0; i < ids.length; i += AT_ONCE) {
    const records = await Promise.all(
      ids.slice(i, i + AT_ONCE).map((id) => dirigent.cancel(id, 'Cancelled by a script.')),
    );
    cancelled += records.filter((rec) => rec.status === 'cancelled').length;
    // About as often as the bulk action's pages (500 runs each) are sampled.
    if ((i / AT_ONCE) % Math.round(500 / AT_ONCE) === 0) sample();
  }
  return cancelled;
}

/** Starts `n` runs of `directive` and waits until the store counts `total` waiting runs. */
async function startWaiting(dirigent: Dirigent, directive: string, n: number, total: number) {
  for (let at = 0; at < n; at += 1000)
    await Promise.all(
      Array.from({ length: Math.min(1000, n - at) }, () => dirigent.start({ directive })),
    );
  await until(
    `${total} waiting runs`,
    async () => (await dirigent.runs.counts()).byStatus.waiting >= total,
    300_000,
    250,
  );
}

// ---- part 2: concurrency keys ----

interface Burst {
  /** From the first start request to the last run's end, ms. */
  ms: number;
  /** Per key: the mean time from a run's start request to its end, ms. */
  meanByKey: number[];
  /** The same over every run, ms. */
  mean: number;
  /** The median over keys of the time from one of the key's runs ending to the next, ms. */
  gapMs: number;
  /** Commands and CPU from the first start request until every run was seen ended. */
  cost: Cost<void>;
}

interface KeyedFigures {
  /** One per round. */
  keyed: Burst[];
  unkeyed: Burst[];
  /** A keyed run alone (nothing else running), start request to end, ms: median. */
  aloneMs: number;
}

async function keyedPart(rig: Rig, o: OperateOptions): Promise<KeyedFigures> {
  const { dirigent } = rig;
  // Warm-up (untimed): the directives loaded and compiled on every side, the paths run once.
  await burst(rig, 'unkeyed', 40, o.keys);
  await burst(rig, 'keyed', 40, o.keys);
  const alone: number[] = [];
  for (let i = 0; i < 9; i++) {
    const at = Date.now();
    const record = await dirigent.run({ directive: 'keyed', inputs: { customer: 'alone' } });
    if (record.status !== 'completed') throw new Error(`keyed run ended ${record.status}`);
    alone.push(record.endedAt! - at);
  }
  const f: KeyedFigures = { keyed: [], unkeyed: [], aloneMs: median(alone) };
  for (let round = 0; round < o.rounds; round++) {
    const keyed = async () => void f.keyed.push(await burst(rig, 'keyed', o.keyedRuns, o.keys));
    const unkeyed = async () =>
      void f.unkeyed.push(await burst(rig, 'unkeyed', o.keyedRuns, o.keys));
    for (const side of round % 2 === 0 ? [keyed, unkeyed] : [unkeyed, keyed]) await side();
  }
  return f;
}

/**
 * Starts `n` runs of `directive` at once, run i for customer `c<i mod keys>`, and waits for all
 * to end; each run's time from its start request to its end, by key.
 */
async function burst(rig: Rig, directive: string, n: number, keys: number): Promise<Burst> {
  const { dirigent } = rig;
  const before = (await dirigent.runs.counts()).byStatus;
  const asked = new Map<string, { key: string; at: number }>();
  let first = 0;
  const cost = await costOf(rig, async () => {
    first = Date.now();
    await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const key = `c${i % keys}`;
        const at = Date.now();
        const run = await dirigent.start({ directive, inputs: { customer: key } });
        asked.set(run.runId, { key, at });
      }),
    );
    await until(`${n} runs of ${directive} to end`, async () => {
      const now = (await dirigent.runs.counts()).byStatus;
      if (now.failed > before.failed) throw new Error(`a run of ${directive} failed`);
      return now.completed - before.completed >= n;
    });
  });
  let last = 0;
  const byKey = new Map<string, { took: number[]; ends: number[] }>();
  for (const record of await recordsOf(dirigent, directive, [...asked.keys()])) {
    const { key, at } = asked.get(record.runId)!;
    if (record.status !== 'completed' || record.endedAt === null)
      throw new Error(`run ${record.runId} of ${directive} is ${record.status}`);
    last = Math.max(last, record.endedAt);
    const runs = byKey.get(key) ?? { took: [], ends: [] };
    runs.took.push(record.endedAt - at);
    runs.ends.push(record.endedAt);
    byKey.set(key, runs);
  }
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const gap = ({ ends }: { ends: number[] }) =>
    (Math.max(...ends) - Math.min(...ends)) / Math.max(1, ends.length - 1);
  const perKey = [...byKey.values()];
  return {
    ms: last - first,
    meanByKey: perKey.map((k) => mean(k.took)),
    mean: mean(perKey.flatMap((k) => k.took)),
    gapMs: median(perKey.map(gap)),
    cost,
  };
}

/** The records of `runIds`, read in pipelined pages of the directive's list. */
async function recordsOf(dirigent: Dirigent, directive: string, runIds: readonly string[]) {
  const wanted = new Set(runIds);
  const out: RunRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await dirigent.list({ directive, limit: 1000, ...(cursor && { cursor }) });
    out.push(...page.runs.filter((r) => wanted.has(r.runId)));
    cursor = page.next;
  } while (cursor !== undefined && out.length < wanted.size);
  if (out.length !== wanted.size)
    throw new Error(`found ${out.length} of ${wanted.size} runs of ${directive}`);
  return out;
}

// ---- the section ----

/** The costs of several rounds as one: times, commands and CPU summed, memory at its largest. */
function combined(costs: readonly Cost<unknown>[]): Cost<undefined> {
  const byCommand = new Map<string, number>();
  for (const c of costs)
    for (const [name, calls] of c.byCommand)
      byCommand.set(name, (byCommand.get(name) ?? 0) + calls);
  const sum = (f: (c: Cost<unknown>) => number) => costs.reduce((a, c) => a + f(c), 0);
  const max = (f: (c: Cost<unknown>) => number) => Math.max(...costs.map(f));
  return {
    value: undefined,
    ms: sum((c) => c.ms),
    commands: sum((c) => c.commands),
    byCommand,
    cpu: {
      redis: sum((c) => c.cpu.redis),
      workers: sum((c) => c.cpu.workers),
      client: sum((c) => c.cpu.client),
    },
    heapPeak: max((c) => c.heapPeak),
    heapAfter: max((c) => c.heapAfter),
    rss: max((c) => c.rss),
  };
}

function section(
  o: OperateOptions,
  f: CancelFigures,
  k: KeyedFigures,
  idlePerS: number,
): BenchSection {
  const n = o.cancels;
  const count = (x: number) => x.toLocaleString('en-US');
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const mb = (bytes: number) =>
    `${bytes <= -0.05 * MB ? '−' : '+'}${(Math.abs(bytes) / MB).toFixed(1)} MB`;
  /** µs per run of each round. */
  const usPer = (xs: readonly { ms: number }[], of = n) => xs.map((x) => (x.ms * 1000) / of);
  /** Every round as one, and the runs of all rounds. */
  const c = {
    dry: combined(f.dry),
    bulk: combined(f.bulk),
    plain: combined(f.plain),
    keyed: combined(k.keyed.map((b) => b.cost)),
    unkeyed: combined(k.unkeyed.map((b) => b.cost)),
  };
  const cancelled = n * o.rounds;
  const keyedRuns = o.keyedRuns * o.rounds;
  const cmds = (x: Cost<unknown>, of = cancelled) => (x.commands / of).toFixed(1);
  const heap = (x: Cost<unknown>) => `client live heap at most ${mb(x.heapPeak)} during it`;
  const idleShare = (x: Cost<unknown>) => ((idlePerS * x.ms) / 1000 / cancelled).toFixed(2);
  const cpuTotal = (x: Cost<unknown>) => x.cpu.redis + x.cpu.workers + x.cpu.client;
  const busy = (x: Cost<unknown>) => cpuTotal(x) / 1000 / x.ms;
  /** CPU per run, µs, by process, and how many of the machine's cores were busy on average. */
  const cpu = (x: Cost<unknown>, of = cancelled) => {
    const { redis, workers, client } = x.cpu;
    const per = (v: number) => (v / of).toFixed(0);
    return (
      `${per(cpuTotal(x))} µs of CPU per run (Redis ${per(redis)}, workers ${per(workers)}, ` +
      `client ${per(client)}; ${busy(x).toFixed(2)} of ${cpus().length} cores busy)`
    );
  };
  /** The commands called most per run. */
  const top = (x: Cost<unknown>, of = cancelled) =>
    [...x.byCommand]
      .filter(([, calls]) => calls / of >= 0.5)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10)
      .map(([name, calls]) => `\`${name}\` ${(calls / of).toFixed(1)}`)
      .join(', ');
  const wholeS = (xs: readonly { ms: number }[]) => s(median(xs.map((x) => x.ms)));

  const ratio = withinRounds(usPer(f.bulk), usPer(f.plain), (x, y) => x / y);
  const keyedUs = usPer(k.keyed, o.keyedRuns);
  const unkeyedUs = usPer(k.unkeyed, o.keyedRuns);
  const keyedPerS = 1e6 / median(keyedUs);
  const unkeyedPerS = 1e6 / median(unkeyedUs);
  const keyedShare = withinRounds(unkeyedUs, keyedUs, (x, y) => x / y);
  const spreadOf = (b: Burst) => Math.max(...b.meanByKey) / Math.min(...b.meanByKey);
  const cvOf = (b: Burst) => {
    const xs = b.meanByKey;
    const m = xs.reduce((a, x) => a + x, 0) / xs.length;
    return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / xs.length) / m;
  };
  /** Medians over rounds. */
  const spread = (bs: readonly Burst[]) => median(bs.map(spreadOf));
  const cv = (bs: readonly Burst[]) => median(bs.map(cvOf));
  const worst = (bs: readonly Burst[]) => Math.max(...bs.map(spreadOf));
  const mean = (bs: readonly Burst[]) => median(bs.map((b) => b.mean));
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  const perKey = o.keyedRuns / o.keys;
  /** What the keys side by side would give, each running one run at a time as fast as one alone. */
  const ideal = (o.keys * 1000) / k.aloneMs;
  /** …as far as the workers keep up: the same runs unkeyed. */
  const reachable = Math.min(ideal, unkeyedPerS);
  const shortOfIt = keyedPerS < 0.5 * reachable;
  const peakPerId = c.plain.heapPeak / n;
  const roundsText = o.rounds === 1 ? 'One round' : `${o.rounds} rounds`;

  return {
    title: 'Operating runs: bulk cancel and concurrency keys',
    rows: [
      benchRow(
        `Bulk cancel (\`dirigent.bulk\`) of ${count(n)} waiting runs, per run`,
        usPer(f.bulk),
        'runs/s',
        `**${ratio.toFixed(2)}×** the plain script's time (whole action ${wholeS(f.bulk)}); ` +
          `**${cmds(c.bulk)}** Redis commands per run (script ${cmds(c.plain)}); ${heap(c.bulk)}`,
      ),
      benchRow(
        `… its dry run over the same ${count(n)} (counted, a sample shown), per run`,
        usPer(f.dry),
        'runs/s',
        `whole dry run ${(median(f.dry.map((d) => d.ms)) / 1000).toFixed(2)} s ` +
          `(${withinRounds(usPer(f.dry), usPer(f.bulk), (x, y) => x / y).toFixed(3)}× the ` +
          `action's time); ${cmds(c.dry)} commands per run; ${heap(c.dry)}`,
      ),
      benchRow(
        `Plain script: every page listed, then \`dirigent.cancel(id)\` ${AT_ONCE} at a time, ${count(n)} other waiting runs, per run`,
        usPer(f.plain),
        'runs/s',
        `baseline (whole ${wholeS(f.plain)}; ${cmds(c.plain)} commands per run; ${heap(c.plain)})`,
      ),
      benchRow(
        `${count(o.keyedRuns)} one-step runs over ${o.keys} concurrency keys (\`limit="1"\`, ${perKey} runs each) started at once, ${WORKERS} workers, per run`,
        keyedUs,
        'runs/s',
        `**${keyedShare.toFixed(2)}×** the unkeyed throughput; fairness, mean start→end per ` +
          `key: spread **${spread(k.keyed).toFixed(2)}×** (max/min), coefficient of variation ` +
          `${pct(cv(k.keyed))}`,
      ),
      benchRow(
        `The same ${count(o.keyedRuns)} runs without a concurrency key, per run`,
        unkeyedUs,
        'runs/s',
        `baseline (whole ${wholeS(k.unkeyed)}; per customer, as above: spread ` +
          `${spread(k.unkeyed).toFixed(2)}×, coefficient of variation ${pct(cv(k.unkeyed))})`,
      ),
    ],
    notes: [
      `${roundsText} of each, the side that goes first turning each round, on a private ` +
        `\`redis-server\` (its append-only file, synced at every write, on a memory file ` +
        `system) served by ${WORKERS} \`dirigent worker\` processes with the default settings ` +
        `(50 runs and 8 tool calls at once each, the default log). This process is only the ` +
        `client (\`Dirigent.open\` on Redis), so its memory is the client's; client, workers ` +
        `and Redis share the machine's ${cpus().length} cores. Each round starts and parks ` +
        `${count(2 * n)} waiting runs first (a directive whose one step is \`<wait ` +
        `signal="go"/>\`; two alike, one per side; ${(f.setupS / o.rounds).toFixed(0)} s a ` +
        `round, untimed), after a warm-up bulk cancel of ${count(WARM)} others (enough to fill ` +
        `the client's cache of the 1,000 unended runs it last read, which the side measured ` +
        `first would otherwise pay for). The bulk action cancels the runs of \`{ directive, ` +
        `status: "waiting" }\` in pages of 500, 16 at once, writing its ledger ` +
        `(\`${PREFIX}:bulk:<id>\`) before and after each 16; the plain script lists every page ` +
        `(${count(LIST_PAGE)} a page) keeping the ids, then awaits \`dirigent.cancel(id)\` ` +
        `${AT_ONCE} at a time. µs per run is a round's whole time over its runs, the median ` +
        `over rounds; ratios are medians of the per-round ratios.`,
      `Redis commands per run are the server's \`total_commands_processed\` over the actions ` +
        `divided by the runs: the client's commands, **the workers' too** (each cancel is a run ` +
        `job a worker takes, claims the run, cancels it and stores it), the commands inside Lua ` +
        `scripts (Redis counts them), and the workers' background (blocking polls, lease ` +
        `renewals): ${count(Math.round(idlePerS))} commands/s with the workers idle, about ` +
        `${idleShare(c.bulk)} per run over the bulk actions' time. Per run of the bulk action, ` +
        `the commands called most (\`INFO commandstats\`): ${top(c.bulk)}. CPU: bulk action ` +
        `${cpu(c.bulk)}; script ${cpu(c.plain)}.`,
      `Both sides cancel through the same \`Dirigent.cancel\` (the bulk action calls it), which ` +
        `reads the run's record, then reads it again in the client (\`RunsClient.cancel\` asks ` +
        `its status) before adding the cancel job and waiting for it through \`QueueEvents\`; a ` +
        `worker then claims the run, loads it, cancels it and stores it. The bulk action adds ` +
        `its ledger (an \`HMGET\` per page, a \`MULTI\` of \`HSET\` and \`EXPIRE\` before and ` +
        `after each 16 runs) and waits for the slowest of each 16 before the next, so it is no ` +
        `faster than the script (${ratio.toFixed(2)}× its time): what it buys is going on after ` +
        `an interruption without acting twice, a report per page, and a dry run ` +
        `(${(median(f.dry.map((d) => d.ms)) / 1000).toFixed(2)} s to count and sample the ` +
        `${count(n)}). Either side, each 16 cancels at once make Node print a ` +
        `\`MaxListenersExceededWarning\` on standard error (BullMQ's \`Job.waitUntilFinished\` ` +
        `adds a \`closing\` listener to the client's one runs queue per wait, and 16 pass Node's ` +
        `default of 10): about one warning per 16 runs cancelled.`,
      `Client memory: the live heap after a full collection, read before the action, after ` +
        `each page of the bulk action (for the script: after listing, then every 496 cancels), ` +
        `and after; the largest over rounds. The bulk action holds one page (500 whole records) ` +
        `at a time, so its peak (${mb(c.bulk.heapPeak)}) stays the same whatever the number of ` +
        `runs matched; the script holds every id it listed before cancelling the first: ` +
        `${mb(c.plain.heapPeak)} for ${count(n)} ids (about ${peakPerId.toFixed(0)} bytes ` +
        `each), growing with the runs matched. ` +
        (c.bulk.heapPeak > c.plain.heapPeak
          ? `At ${count(n)} runs the script's list is still the smaller of the two. `
          : `At ${count(n)} runs the script already holds more than the bulk action's page. `) +
        `After the action: bulk ${mb(c.bulk.heapAfter)}, script ${mb(c.plain.heapAfter)} ` +
        `(RSS ${mb(c.bulk.rss)} and ${mb(c.plain.rss)}, which move with the collector).`,
      `Concurrency keys: a one-step directive (a \`<render>\`) with \`<concurrency ` +
        `key="\${inputs.customer}" limit="1"/>\`, ${count(o.keyedRuns)} runs started at once ` +
        `(run i for customer c(i mod ${o.keys})), against the same directive without the key; ` +
        `each side timed from the first start request to the last run's end (its record's ` +
        `\`endedAt\`), after an untimed warm-up of 40 runs each. Fairness: for each key, the ` +
        `mean over its ${perKey} runs of the time from the run's start request to its end; the ` +
        `spread is the largest of these ${o.keys} means over the smallest, and the coefficient ` +
        `of variation their standard deviation over their mean (1.00× and 0 % would be keys ` +
        `served exactly alike), medians over rounds (worst round's spread ` +
        `${worst(k.keyed).toFixed(2)}×). All runs are asked for at once, so a key's mean is ` +
        `about half the time its ${perKey} runs take one after the other (keyed mean ` +
        `start→end ${s(mean(k.keyed))}; unkeyed ${s(mean(k.unkeyed))}). ` +
        (worst(k.keyed) < 1.5
          ? `The keys were served evenly: none waited behind another's runs.`
          : `**The keys were not served evenly**: some waited behind others' runs.`),
      `What ${o.keys} keys side by side should give: a keyed run alone (nothing else running) ` +
        `takes ${k.aloneMs.toFixed(0)} ms from start request to end (median of 9), so ${o.keys} ` +
        `keys each running one run at a time could end ${ideal.toFixed(0)} runs/s, or as many ` +
        `as the workers manage (unkeyed: ${unkeyedPerS.toFixed(0)} runs/s). Measured: ` +
        `**${keyedPerS.toFixed(0)} runs/s**, each key's runs ending one every ` +
        `${median(k.keyed.map((b) => b.gapMs)).toFixed(0)} ms (median over keys). ` +
        (shortOfIt
          ? `That is **far below** what ${o.keys} parallel keys should give ` +
            `(${(keyedPerS / reachable).toFixed(2)}× of ${reachable.toFixed(0)} runs/s). `
          : `That is about what ${o.keys} parallel keys should give. `) +
        `Per run, keyed: ${cmds(c.keyed, keyedRuns)} commands and ` +
        `${cpu(c.keyed, keyedRuns)}; unkeyed: ${cmds(c.unkeyed, keyedRuns)} commands and ` +
        `${cpu(c.unkeyed, keyedRuns)}. ` +
        (Math.abs(busy(c.keyed) / busy(c.unkeyed) - 1) < 0.2
          ? `The cores were about as busy on both sides, so the throughput follows the CPU a run ` +
            `costs: a keyed run is ${(cpuTotal(c.keyed) / cpuTotal(c.unkeyed)).toFixed(1)}× an ` +
            `unkeyed one's, and the keys, served side by side, were not what held it back. `
          : '') +
        `A keyed start is a job of its own, added delayed, admitted by a Lua script and ` +
        `promoted (by the client when it takes a slot, else by the worker that ends the key's ` +
        `previous run, after its release script), and admitted again by the worker that takes ` +
        `it up; unkeyed starts share jobs of up to 50 runs. Most keyed commands per run: ` +
        `${top(c.keyed, keyedRuns)}.`,
    ],
  };
}
