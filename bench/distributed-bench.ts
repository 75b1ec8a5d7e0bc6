/**
 * Dirigent on BullMQ against hand-written BullMQ on the same Redis, all in this process: a
 * sequential directive against a chain of jobs, one-step runs per second against no-op jobs, a
 * 1,000-item foreach against a FlowProducer parent with 1,000 children, and the Redis memory a
 * waiting run holds against an empty job's. Every side of every round gets its own key prefix,
 * whose keys are deleted (and queues obliterated) afterwards.
 */
import { ItemResolver } from '../src/items/item-resolver.js';
import { defaultSpaces } from '../src/items/space.js';
import type { RunJobData, RunSource } from '../src/redis/run-job.js';
import { runSourceOf } from '../src/redis/run-source.js';
import { randomUUID } from 'node:crypto';
import { FlowProducer, Queue, Worker, type Processor } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RedisClient } from '../src/redis/redis-client.js';
import { DirectiveLoader, type LoadedDirective } from '../src/engine/directive-loader.js';
import type { RunRecord, RunStatus } from '../src/engine/run-record.js';
import { TOOL_JOB_RETENTION } from '../src/redis/run-worker/queue-dispatcher.js';
import { QueueName } from '../src/redis/queue-names.js';
import { queueOptions } from '../src/redis/queue-options.js';
import { connectRedis, pingRedis, redisDownMessage } from '../src/redis/redis-connection.js';
import { RunWorker } from '../src/redis/run-worker/run-worker.js';
import { RunsClient } from '../src/redis/client/runs-client.js';
import { DEFAULT_START_GROUP } from '../src/redis/client/start-sender.js';
import { ToolWorker } from '../src/redis/tool-worker/tool-worker.js';
import type { TelemetryOptions } from '../src/telemetry/telemetry.js';
import { benchRow, withinRounds } from './bench-row.js';
import type { BenchSection } from './bench-section.js';
import { echoSequenceDirective } from './echo-sequence-directive.js';
import type { GeneratedDirective } from './generated-directive.js';
import { median } from './median.js';

/** The goals: ratios to the BullMQ baselines, and bytes of Redis per waiting run. */
export const DISTRIBUTED_GOALS = {
  /** Time per step of a sequential directive, at most this many times the chain's per job. */
  stepRatio: 1.3,
  /** One-step runs per second, at least this share of no-op jobs per second. */
  rateShare: 0.5,
  /** A 1,000-item foreach, at most this many times the FlowProducer parent with its children. */
  foreachRatio: 1.5,
  /** Redis memory per waiting run. */
  bytesPerWaitingRun: 5 * 1024,
} as const;

/** Sizes of each measurement. */
export const SIZE = {
  steps: 20,
  /** Timed runs of the sequence (and chains) per side per round; the round's figure is their median. */
  stepReps: 10,
  /** Timed batches of runs (and of no-op jobs) per side per round. */
  batchReps: 3,
  /** Timed foreach runs (and flows) per side per round. */
  foreachReps: 2,
  runs: 200,
  items: 1000,
  waiting: 200,
} as const;

/** Concurrency of every worker on both sides. */
const CONCURRENCY = 50;
/** Longest wait for the jobs of one measurement. */
const WAIT_MS = 120_000;
const KB = 1024;

/** How a job ended, as its worker reported it. */
type Outcome = { value: unknown } | { error: Error };

/**
 * The jobs a worker finished, by id, reported through its `completed` and `failed` events (so
 * both sides are timed to the same point: the worker has moved the job to its final state). A
 * group of starts finishes each of its runs under the run's id.
 */
class Finished {
  private readonly done = new Map<string, Outcome>();
  private readonly waiters = new Set<{ left: Set<string>; resolve: () => void }>();

  constructor(worker: Worker) {
    worker.on('completed', (job, value: unknown) => {
      if ((job.data as { kind?: string }).kind !== 'starts') this.settle(job.id!, { value });
      else for (const r of value as RunRecord[]) this.settle(r.runId, { value: r });
    });
    worker.on('failed', (job, error) => {
      if (job?.id !== undefined) this.settle(job.id, { error });
    });
  }

  /** The results of jobs `ids` once all have ended; rejects if one failed or time runs out. */
  async results(ids: readonly string[]): Promise<unknown[]> {
    const left = new Set(ids.filter((id) => !this.done.has(id)));
    if (left.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const waiter = { left, resolve: () => {} };
      try {
        await new Promise<void>((resolve, reject) => {
          waiter.resolve = resolve;
          this.waiters.add(waiter);
          timer = setTimeout(
            () =>
              reject(
                new Error(`${left.size} of ${ids.length} jobs unfinished after ${WAIT_MS} ms`),
              ),
            WAIT_MS,
          );
        });
      } finally {
        clearTimeout(timer);
        this.waiters.delete(waiter);
      }
    }
    return ids.map((id) => {
      const outcome = this.done.get(id)!;
      if ('error' in outcome) throw new Error(`job ${id} failed: ${outcome.error.message}`);
      return outcome.value;
    });
  }

  private settle(id: string, outcome: Outcome): void {
    this.done.set(id, outcome);
    for (const w of this.waiters) if (w.left.delete(id) && w.left.size === 0) w.resolve();
  }
}

/** A fresh key prefix, and what to close before its keys are deleted. */
export interface Scope {
  prefix: string;
  /** Registers a close to run (in reverse order) when the measurement ends. */
  defer(close: () => Promise<unknown> | void): void;
}

/**
 * Runs `work` under a fresh prefix; then closes what it registered, obliterates `queues` and
 * deletes every `<prefix>*` key.
 */
async function withPrefix<T>(
  redis: RedisClient,
  queues: readonly string[],
  work: (scope: Scope) => Promise<T>,
): Promise<T> {
  const prefix = `dirigent-bench:${randomUUID()}`;
  const closes: (() => Promise<unknown> | void)[] = [];
  try {
    return await work({ prefix, defer: (c) => void closes.push(c) });
  } finally {
    for (const close of closes.reverse()) await close();
    for (const name of queues) {
      const queue = new Queue(name, { connection: redis, prefix });
      await queue.obliterate({ force: true });
      await queue.close();
    }
    await deleteKeys(redis, `${prefix}*`);
  }
}

/** A BullMQ worker on its own connection, closed (with the connection) when the scope ends. */
function worker(redis: RedisClient, scope: Scope, queue: string, processor: Processor): Finished {
  const connection = redis.duplicate();
  const w = new Worker(queue, processor, {
    connection,
    prefix: scope.prefix,
    concurrency: CONCURRENCY,
  });
  scope.defer(async () => {
    await w.close();
    connection.disconnect();
  });
  return new Finished(w);
}

/** A queue as Dirigent opens its own, closed when the scope ends. */
function queue(redis: RedisClient, scope: Scope, name: string): Queue {
  const q = new Queue(name, queueOptions(redis, scope.prefix));
  scope.defer(() => q.close());
  return q;
}

/**
 * A connection of the scope's own, whose `duplicate()`s are disconnected when the scope ends, after
 * what was deferred later has closed. `RunWorker` and `ToolWorker` hand duplicates to BullMQ, which
 * never closes a connection it is given, and their `close()` does not either: without this, every
 * measurement would leave connections open and the process could not exit.
 */
function ownedConnection(redis: RedisClient, scope: Scope): RedisClient {
  const own = redis.duplicate() as Redis;
  const copies: RedisClient[] = [own];
  const duplicate = own.duplicate.bind(own);
  own.duplicate = (...args: Parameters<Redis['duplicate']>) => {
    const copy = duplicate(...args);
    copies.push(copy);
    return copy;
  };
  scope.defer(() => {
    for (const c of copies) c.disconnect();
  });
  return own;
}

/** One RunWorker and one ToolWorker in this process, and a client that starts runs on them. */
export interface Deployment {
  prefix: string;
  /** Starts `count` runs at once (detached) and resolves with their records once their run jobs ended. */
  runMany(
    loaded: LoadedDirective,
    inputs: Record<string, unknown>,
    count: number,
  ): Promise<{ runIds: string[]; records: RunRecord[] }>;
}

/** How a {@link Deployment} is wired. */
export interface DeploymentOptions {
  /** The tool worker beside the run worker runs a step's call in process (default true). */
  eager?: boolean;
  /** The client's most runs per job of starts made together (default the client's own). */
  startGroup?: number;
}

/**
 * Runs `work` on a {@link Deployment} under a fresh prefix. `telemetry`, when given, goes to the
 * RunWorker, the ToolWorker and the RunsClient (the telemetry benchmark); without it, none is
 * recorded, as in this file's own measurements.
 */
export async function withDeployment<T>(
  redis: RedisClient,
  work: (d: Deployment, scope: Scope) => Promise<T>,
  telemetry?: TelemetryOptions,
  { eager = true, startGroup }: DeploymentOptions = {},
): Promise<T> {
  return withPrefix(redis, [QueueName.RUNS, QueueName.TOOLS], async (scope) => {
    const { prefix } = scope;
    const connection = ownedConnection(redis, scope);
    const traced = telemetry && { telemetry };
    const toolWorker = new ToolWorker({
      redis: connection,
      prefix,
      concurrency: CONCURRENCY,
      ...traced,
    });
    scope.defer(() => toolWorker.close());
    const runWorker = new RunWorker({
      redis: connection,
      prefix,
      concurrency: CONCURRENCY,
      ...(eager && { tools: toolWorker }),
      ...traced,
    });
    scope.defer(() => runWorker.close());
    const client = new RunsClient(connection, prefix, telemetry, {
      ...(startGroup !== undefined && { startGroup }),
    });
    scope.defer(() => client.close());
    const finished = new Finished(runWorker.worker);
    await Promise.all([runWorker.worker.waitUntilReady(), toolWorker.worker.waitUntilReady()]);
    const items = new ItemResolver(defaultSpaces(process.cwd()));
    return work(
      {
        prefix,
        async runMany(loaded, inputs, count) {
          const source = await runSourceOf(loaded, items);
          const runIds = await Promise.all(
            Array.from({ length: count }, () => client.start(source, inputs)),
          );
          return { runIds, records: (await finished.results(runIds)) as RunRecord[] };
        },
      },
      scope,
    );
  });
}

/** Throws unless every record has `status` (and, if given, `steps` step entries). */
function expectRuns(records: readonly RunRecord[], status: RunStatus, steps?: number): void {
  for (const r of records) {
    if (r.status !== status || (steps !== undefined && r.steps.length !== steps)) {
      const why = r.error ? `: ${r.error.code} ${r.error.message}` : '';
      throw new Error(
        `run ${r.runId} of ${r.directive} ended ${r.status} after ${r.steps.length} steps, ` +
          `expected ${status}${steps === undefined ? '' : ` after ${steps}`}${why}`,
      );
    }
  }
}

/** Milliseconds `work` takes. */
async function elapsedMs(work: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

/** CPU time of this process and of the Redis server while `work` runs, µs. */
async function cpuOf<T>(
  redis: RedisClient,
  work: () => Promise<T>,
): Promise<{ value: T; node: number; redis: number }> {
  const redisBefore = await redisCpuUs(redis);
  const nodeBefore = process.cpuUsage();
  const value = await work();
  const node = process.cpuUsage(nodeBefore);
  return { value, node: node.user + node.system, redis: (await redisCpuUs(redis)) - redisBefore };
}

async function redisCpuUs(redis: RedisClient): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) =>
    Number(info.match(new RegExp(`^${name}:([\\d.]+)`, 'm'))?.[1] ?? 0);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
}

async function usedMemory(redis: RedisClient): Promise<number> {
  const info = await redis.info('memory');
  return Number(info.match(/^used_memory:(\d+)/m)?.[1] ?? NaN);
}

/** Every key under `pattern` (SCAN). */
async function keysOf(redis: RedisClient, pattern: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    out.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return out;
}

async function deleteKeys(redis: RedisClient, pattern: string): Promise<void> {
  const keys = await keysOf(redis, pattern);
  for (let i = 0; i < keys.length; i += 1000) await redis.unlink(...keys.slice(i, i + 1000));
}

/** `MEMORY USAGE … SAMPLES 0` (every element counted) of each key. */
async function memoryOfKeys(redis: RedisClient, keys: readonly string[]): Promise<number[]> {
  if (keys.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const key of keys) pipeline.memory('USAGE', key, 'SAMPLES', 0);
  const rows = (await pipeline.exec()) ?? [];
  return rows.map(([err, bytes]) => {
    if (err) throw err;
    return Number(bytes ?? 0);
  });
}

/** The bytes of every key under `prefix`, summed by the key with run and job ids left out. */
async function memoryByKind(redis: RedisClient, prefix: string): Promise<Map<string, number>> {
  const keys = await keysOf(redis, `${prefix}*`);
  const sizes = await memoryOfKeys(redis, keys);
  const byKind = new Map<string, number>();
  keys.forEach((key, i) => {
    const kind = withoutIds(key.slice(prefix.length));
    byKind.set(kind, (byKind.get(kind) ?? 0) + sizes[i]!);
  });
  return byKind;
}

/** A key with UUIDs (and what follows them up to the next `:`) as `<id>`, numeric ids as `<n>`. */
function withoutIds(text: string): string {
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}[^:]*/g, '<id>')
    .replace(/:\d[\d.]*(?=:|$)/g, ':<n>');
}

/** How Redis memory grew while `work` ran, per run (or job) of `count`. */
interface Growth {
  /** Every key under the prefix (`MEMORY USAGE`), bytes per run. */
  keys: number;
  /** The server's `used_memory`, bytes per run. */
  used: number;
  /** `keys` by key kind (ids left out). */
  byKind: Map<string, number>;
  ms: number;
}

async function memoryGrowth(
  redis: RedisClient,
  prefix: string,
  count: number,
  work: () => Promise<unknown>,
): Promise<Growth> {
  const before = await memoryByKind(redis, prefix);
  const usedBefore = await usedMemory(redis);
  const ms = await elapsedMs(work);
  const usedAfter = await usedMemory(redis);
  const after = await memoryByKind(redis, prefix);
  const byKind = new Map<string, number>();
  for (const kind of new Set([...before.keys(), ...after.keys()])) {
    byKind.set(kind, ((after.get(kind) ?? 0) - (before.get(kind) ?? 0)) / count);
  }
  const keys = [...byKind.values()].reduce((a, b) => a + b, 0);
  return { keys, used: (usedAfter - usedBefore) / count, byKind, ms };
}

// ---- the directives ----

function foreachDirective(): GeneratedDirective {
  const text = `# Echo foreach

\`\`\`xml
<directive name="echo-foreach" version="1.0.0">
  <metadata><description>Distributed benchmark: one echo job per item, all at once.</description></metadata>
  <inputs>
    <input name="items" type="array">The items</input>
  </inputs>
  <process>
    <step name="each">
      <foreach over="\${inputs.items}" as="item" parallel="${SIZE.items}" collect="echoed">
        <execute item_type="tool" item_id="dirigent/util/echo">
          <param name="i" value="\${item}"/>
        </execute>
      </foreach>
    </step>
  </process>
</directive>
\`\`\`
`;
  return { file: 'bench/echo-foreach.md', text, steps: 1 };
}

/** Steps after the instruction of the long waiting directive: about 5 KB of text in all. */
const LONG_WAITING_PADDING = 20;

/**
 * A directive whose first step waits for a person; `padding` steps after it (never reached) make
 * its text as long as a real directive's.
 */
function waitingDirective(padding = 0): GeneratedDirective {
  const later = Array.from(
    { length: padding },
    (_, i) => `    <step name="ship${i}">
      <execute item_type="tool" item_id="dirigent/util/echo">
        <param name="note" value="Release \${inputs.label}, part ${i}: check the artifacts, the changelog and the rollout plan."/>
      </execute>
    </step>`,
  ).join('\n');
  const text = `# Waiting run

\`\`\`xml
<directive name="waiting-run" version="1.0.0">
  <metadata><description>Distributed benchmark: a run that waits for a person.</description></metadata>
  <inputs>
    <input name="label" type="string" default="bench">Shown in the instruction</input>
  </inputs>
  <process>
    <step name="approve">
      <instruction>Approve the release of \${inputs.label}. Reply with {"approved": true}.</instruction>
    </step>
${later}
  </process>
</directive>
\`\`\`
`;
  return { file: 'bench/waiting-run.md', text, steps: 1 + padding };
}

// ---- the measurements: each returns one figure for one round ----

/** Per-round figures of a side: µs per operation of wall time, Node CPU and Redis CPU. */
export interface Timed {
  us: number;
  nodeCpuUs: number;
  redisCpuUs: number;
}

/** What a side times: `once` performs `units` operations; it runs `reps` times after `warm`. */
export interface Rig {
  warm: () => Promise<unknown>;
  once: () => Promise<unknown>;
  units: number;
  reps: number;
}

/** The median of the rig's timed repetitions per operation, with the CPU of all of them. */
export async function timed(redis: RedisClient, rig: Rig): Promise<Timed> {
  await rig.warm();
  const times: number[] = [];
  const cpu = await cpuOf(redis, async () => {
    for (let i = 0; i < rig.reps; i++) times.push(await elapsedMs(rig.once));
  });
  const ops = rig.reps * rig.units;
  return {
    us: (median(times) * 1000) / rig.units,
    nodeCpuUs: cpu.node / ops,
    redisCpuUs: cpu.redis / ops,
  };
}

/** The sequential directive ({@link SIZE.steps} steps), run after run. */
export function sequenceRig(d: Deployment, loaded: LoadedDirective): Rig {
  const once = async () =>
    expectRuns((await d.runMany(loaded, {}, 1)).records, 'completed', SIZE.steps);
  return {
    warm: async () => [await once(), await once()],
    once,
    units: SIZE.steps,
    reps: SIZE.stepReps,
  };
}

/** A chain of {@link SIZE.steps} jobs, each enqueued by its predecessor's processor, chain after chain. */
function chainRig(redis: RedisClient, scope: Scope): Rig {
  const q = queue(redis, scope, 'bench-chain');
  const finished = worker(redis, scope, 'bench-chain', async (job) => {
    const { rep, i } = job.data as { rep: number; i: number };
    if (i + 1 < SIZE.steps) {
      await q.add('step', { rep, i: i + 1 }, { jobId: `${rep}.${i + 1}`, ...retention() });
    }
    return job.data as unknown;
  });
  let rep = 0;
  const once = async () => {
    const r = rep++;
    await q.add('step', { rep: r, i: 0 }, { jobId: `${r}.0`, ...retention() });
    await finished.results([`${r}.${SIZE.steps - 1}`]);
  };
  return {
    warm: async () => [await once(), await once()],
    once,
    units: SIZE.steps,
    reps: SIZE.stepReps,
  };
}

/** Batches of one-step runs started at once. */
function runsRig(d: Deployment, loaded: LoadedDirective, count: number = SIZE.runs): Rig {
  const batch = (n: number) => async () =>
    expectRuns((await d.runMany(loaded, {}, n)).records, 'completed', 1);
  return { warm: batch(20), once: batch(count), units: count, reps: SIZE.batchReps };
}

/**
 * Batches of one-step runs started at once by a `RunsClient`, their start jobs (groups of starts,
 * as the client sends them) taken by a plain worker that returns at once: run jobs with no engine,
 * no call and no store write, the floor under everything a run does.
 */
function runJobRig(
  redis: RedisClient,
  scope: Scope,
  loaded: LoadedDirective,
  count: number = SIZE.runs,
): Rig {
  const client = new RunsClient(ownedConnection(redis, scope), scope.prefix);
  scope.defer(() => client.close());
  const finished = worker(redis, scope, QueueName.RUNS, async (job) => {
    const data = job.data as RunJobData;
    return data.kind === 'starts' ? data.runs.map((r) => ({ runId: r.runId })) : {};
  });
  const items = new ItemResolver(defaultSpaces(process.cwd()));
  let source: RunSource | undefined;
  const batch = (n: number) => async () => {
    source ??= await runSourceOf(loaded, items);
    const ids = await Promise.all(Array.from({ length: n }, () => client.start(source!, {})));
    await finished.results(ids);
  };
  return { warm: batch(20), once: batch(count), units: count, reps: SIZE.batchReps };
}

/** Batches of no-op jobs added at once. */
function noopRig(redis: RedisClient, scope: Scope, count: number = SIZE.runs): Rig {
  const q = queue(redis, scope, 'bench-noop');
  const finished = worker(redis, scope, 'bench-noop', async () => ({}));
  let batches = 0;
  const batch = (n: number) => async () => {
    const b = batches++;
    const ids = Array.from({ length: n }, (_, i) => `${b}.${i}`);
    await Promise.all(ids.map((jobId) => q.add('noop', {}, { jobId, ...retention() })));
    await finished.results(ids);
  };
  return { warm: batch(20), once: batch(count), units: count, reps: SIZE.batchReps };
}

/** Runs of one foreach step over {@link SIZE.items} items. */
function foreachRig(d: Deployment, loaded: LoadedDirective): Rig {
  const run = (n: number) => async () => {
    const inputs = { items: Array.from({ length: n }, (_, i) => i) };
    expectRuns((await d.runMany(loaded, inputs, 1)).records, 'completed', 1);
  };
  return { warm: run(20), once: run(SIZE.items), units: SIZE.items, reps: SIZE.foreachReps };
}

/** Flows of a parent job with {@link SIZE.items} children, on two queues. */
function flowRig(redis: RedisClient, scope: Scope): Rig {
  const flows = new FlowProducer({ connection: redis, prefix: scope.prefix });
  scope.defer(() => flows.close());
  const parents = worker(redis, scope, 'bench-parent', async () => ({}));
  worker(redis, scope, 'bench-children', async (job) => job.data as unknown);
  let count = 0;
  const flow = (children: number) => async () => {
    const id = `flow.${count++}`;
    await flows.add({
      name: 'parent',
      queueName: 'bench-parent',
      opts: { jobId: id, ...retention() },
      children: Array.from({ length: children }, (_, i) => ({
        name: 'child',
        queueName: 'bench-children',
        data: { i },
        opts: retention(),
      })),
    });
    await parents.results([id]);
  };
  return { warm: flow(20), once: flow(SIZE.items), units: SIZE.items, reps: SIZE.foreachReps };
}

async function waitingSide(redis: RedisClient, loaded: LoadedDirective): Promise<Growth> {
  return withDeployment(redis, async (d) => {
    expectRuns((await d.runMany(loaded, {}, 5)).records, 'waiting');
    return memoryGrowth(redis, d.prefix, SIZE.waiting, async () =>
      expectRuns((await d.runMany(loaded, {}, SIZE.waiting)).records, 'waiting'),
    );
  });
}

async function emptyJobSide(redis: RedisClient): Promise<Growth> {
  return withPrefix(redis, ['bench-empty'], async (scope) => {
    const q = queue(redis, scope, 'bench-empty');
    await Promise.all(Array.from({ length: 5 }, () => q.add('empty', {})));
    return memoryGrowth(redis, scope.prefix, SIZE.waiting, () =>
      Promise.all(Array.from({ length: SIZE.waiting }, () => q.add('empty', {}))),
    );
  });
}

/** Finished jobs kept as Dirigent keeps its tool jobs, so both sides write the same. */
function retention() {
  return {
    removeOnComplete: TOOL_JOB_RETENTION.completed,
    removeOnFail: TOOL_JOB_RETENTION.failed,
  };
}

// ---- profile: the Redis commands of one run against one chain ----

/** Commands this prefix's clients sent while `work` ran (MONITOR; not those run inside scripts), by kind. */
async function commandsOf(
  redis: RedisClient,
  prefix: string,
  work: () => Promise<unknown>,
): Promise<Map<string, number>> {
  // Not `redis.monitor()`: on a busy server, monitor lines can arrive before ioredis has switched
  // the connection to monitoring, and it then emits errors before one can listen for them. Lines
  // from before the switch, or still arriving at the disconnect, are of no interest here.
  const monitor = (redis as Redis).duplicate({ monitor: true, lazyConnect: false });
  monitor.on('error', () => {});
  await new Promise((resolve) => monitor.once('monitoring', resolve));
  const counts = new Map<string, number>();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source === 'lua' || !args.some((a) => a.includes(prefix))) return;
    const command = args[0]!.toLowerCase();
    const key = command.startsWith('eval') ? args[3] : args.find((a) => a.includes(prefix));
    const where = withoutIds((key ?? '').replace(prefix, ''));
    const kind = `${command} ${where}`.trim();
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  });
  try {
    await work();
    await new Promise((r) => setTimeout(r, 100));
  } finally {
    monitor.disconnect();
  }
  return counts;
}

/** The commands of one sequential run, of one chain, of a batch of one-step runs and of no-op jobs. */
interface Profiles {
  sequence: Map<string, number>;
  chain: Map<string, number>;
  runs: Map<string, number>;
  noop: Map<string, number>;
}

/** Batch size of the profiled one-step runs and no-op jobs. */
const PROFILED_BATCH = 20;

async function profile(
  redis: RedisClient,
  sequence: LoadedDirective,
  oneStep: LoadedDirective,
): Promise<Profiles> {
  const [seq, runs] = await withDeployment(redis, async (d) => {
    const s = sequenceRig(d, sequence);
    const r = runsRig(d, oneStep, PROFILED_BATCH);
    await s.warm();
    await r.warm();
    return [
      await commandsOf(redis, d.prefix, s.once),
      await commandsOf(redis, d.prefix, r.once),
    ] as const;
  });
  const [chain, noop] = await withPrefix(redis, ['bench-chain', 'bench-noop'], async (scope) => {
    const c = chainRig(redis, scope);
    const n = noopRig(redis, scope, PROFILED_BATCH);
    await c.warm();
    await n.warm();
    return [
      await commandsOf(redis, scope.prefix, c.once),
      await commandsOf(redis, scope.prefix, n.once),
    ] as const;
  });
  return { sequence: seq, chain, runs, noop };
}

function describeCommands(counts: Map<string, number>, per: number): string {
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const top = [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([kind, n]) => `${(n / per).toFixed(1)}× \`${kind}\``)
    .join(', ');
  return `**${(total / per).toFixed(1)}** (${top})`;
}

// ---- the section ----

/** Every round's figure of every side. */
interface Figures {
  sequence: Timed[];
  chain: Timed[];
  /** The sequence with a run worker alone beside the tool worker: every call a tool job. */
  sequenceJobs: Timed[];
  runs: Timed[];
  /** The one-step runs with every start a job of its own (no groups of starts). */
  runsAlone: Timed[];
  noop: Timed[];
  runsJobs: Timed[];
  /** The one-step runs' start jobs alone (see {@link runJobRig}). */
  runJob: Timed[];
  foreach: Timed[];
  flow: Timed[];
  waiting: Growth[];
  /** Runs of a directive as long as a real one ({@link LONG_WAITING_PADDING} more steps). */
  waitingLong: Growth[];
  empty: Growth[];
}

/**
 * Measures the distributed engine against plain BullMQ on the Redis at `REDIS_URL` (default
 * `redis://127.0.0.1:6379`), in `options.rounds` rounds; each round measures every subject and
 * its baseline once, alternating which side goes first. Ends with one profiled run (the Redis
 * commands it sends) and one profiled chain.
 */
export async function distributedBench(options: { rounds: number }): Promise<BenchSection> {
  const url = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  if (!(await pingRedis(url, 2000))) throw new Error(redisDownMessage(url));
  const redis = connectRedis(url);
  const loader = new DirectiveLoader(process.cwd());
  const load = (g: GeneratedDirective) => loader.fromText(g.file, g.text);
  const sequence = load(echoSequenceDirective(SIZE.steps));
  const oneStep = load(echoSequenceDirective(1));
  const foreach = load(foreachDirective());
  const waiting = load(waitingDirective());
  const waitingLong = load(waitingDirective(LONG_WAITING_PADDING));
  const f: Figures = {
    sequence: [],
    chain: [],
    sequenceJobs: [],
    runs: [],
    runsAlone: [],
    noop: [],
    runsJobs: [],
    runJob: [],
    foreach: [],
    flow: [],
    waiting: [],
    waitingLong: [],
    empty: [],
  };
  /** Measures every side into `f`, in an order that turns by one each round. */
  const pair = async <T>(round: number, ...sides: [T[], () => Promise<T>][]) => {
    const turn = round % sides.length;
    for (const [into, measure] of [...sides.slice(turn), ...sides.slice(0, turn)])
      into.push(await measure());
  };
  /** Without the tool worker beside the run worker: every call a tool job. */
  const asJobs = <T>(work: (d: Deployment) => Promise<T>) =>
    withDeployment(redis, work, undefined, { eager: false });
  try {
    for (let round = 0; round < options.rounds; round++) {
      await pair(
        round,
        [f.sequence, () => withDeployment(redis, (d) => timed(redis, sequenceRig(d, sequence)))],
        [
          f.chain,
          () => withPrefix(redis, ['bench-chain'], (s) => timed(redis, chainRig(redis, s))),
        ],
        [f.sequenceJobs, () => asJobs((d) => timed(redis, sequenceRig(d, sequence)))],
      );
      await pair(
        round,
        [f.runs, () => withDeployment(redis, (d) => timed(redis, runsRig(d, oneStep)))],
        [
          f.runsAlone,
          () =>
            withDeployment(redis, (d) => timed(redis, runsRig(d, oneStep)), undefined, {
              startGroup: 1,
            }),
        ],
        [f.noop, () => withPrefix(redis, ['bench-noop'], (s) => timed(redis, noopRig(redis, s)))],
        [f.runsJobs, () => asJobs((d) => timed(redis, runsRig(d, oneStep)))],
        [
          f.runJob,
          () =>
            withPrefix(redis, [QueueName.RUNS], (s) => timed(redis, runJobRig(redis, s, oneStep))),
        ],
      );
      await pair(
        round,
        [f.foreach, () => withDeployment(redis, (d) => timed(redis, foreachRig(d, foreach)))],
        [
          f.flow,
          () =>
            withPrefix(redis, ['bench-parent', 'bench-children'], (s) =>
              timed(redis, flowRig(redis, s)),
            ),
        ],
      );
      await pair(
        round,
        [f.waiting, () => waitingSide(redis, waiting)],
        [f.waitingLong, () => waitingSide(redis, waitingLong)],
        [f.empty, () => emptyJobSide(redis)],
      );
    }
    return section(f, await profile(redis, sequence, oneStep));
  } finally {
    await redis.quit();
  }
}

function section(f: Figures, profiled: Profiles): BenchSection {
  const us = (xs: readonly { us: number }[]) => xs.map((x) => x.us);
  const ratio = (s: readonly { us: number }[], b: readonly { us: number }[]) =>
    withinRounds(us(s), us(b), (x, y) => x / y);
  const G = DISTRIBUTED_GOALS;
  const stepRatio = ratio(f.sequence, f.chain);
  const rateShare = 1 / ratio(f.runs, f.noop);
  const foreachRatio = ratio(f.foreach, f.flow);
  const perRun = (xs: readonly Growth[]) => xs.map((x) => (x.ms * 1000) / SIZE.waiting);
  const waitingBytes = median(f.waiting.map((w) => w.keys));
  const longBytes = median(f.waitingLong.map((w) => w.keys));
  const longText = waitingDirective(LONG_WAITING_PADDING).text.length;
  const emptyBytes = median(f.empty.map((e) => e.keys));
  const kb = (bytes: number) => `${(bytes / KB).toFixed(2)} KB`;
  const cpu = (xs: readonly Timed[]) =>
    `${median(us(xs)).toFixed(0)} µs wall, ${median(xs.map((x) => x.nodeCpuUs)).toFixed(0)} µs ` +
    `Node CPU, ${median(xs.map((x) => x.redisCpuUs)).toFixed(0)} µs Redis CPU`;
  const items = SIZE.items.toLocaleString('en-US');
  const runJobKinds = [`:${QueueName.RUNS}:<id>`, `:${QueueName.RUNS}:completed`];
  const withoutRunJob = median(
    f.waiting.map((w) => w.keys - runJobKinds.reduce((sum, k) => sum + (w.byKind.get(k) ?? 0), 0)),
  );
  const cpuRatio = (s: readonly Timed[], b: readonly Timed[]) =>
    withinRounds(
      s.map((x) => x.nodeCpuUs),
      b.map((x) => x.nodeCpuUs),
      (x, y) => x / y,
    ).toFixed(1);
  return {
    title: 'Distributed runs on BullMQ against plain BullMQ, same Redis',
    rows: [
      benchRow(
        `Dirigent: ${SIZE.steps} sequential echo steps, each call in process (a worker on both queues), per step`,
        us(f.sequence),
        'steps/s',
        `**${stepRatio.toFixed(2)}×** the chain's time per step ` +
          `(+${withinRounds(us(f.sequence), us(f.chain), (s, b) => s - b).toFixed(0)} µs/step)`,
        { text: `≤ ${G.stepRatio}× the chain per step`, met: () => stepRatio <= G.stepRatio },
      ),
      benchRow(
        `… the same with every call a tool job (run and tool workers apart), per step`,
        us(f.sequenceJobs),
        'steps/s',
        `${ratio(f.sequenceJobs, f.chain).toFixed(2)}× the chain's time per step`,
      ),
      benchRow(
        `BullMQ chain: each job's processor enqueues the next (${SIZE.steps} jobs), per job`,
        us(f.chain),
        'jobs/s',
      ),
      benchRow(
        `Dirigent: ${SIZE.runs} one-step echo runs started at once, call in process, per run`,
        us(f.runs),
        'runs/s',
        `**${rateShare.toFixed(2)}×** the no-op job rate`,
        { text: `≥ ${G.rateShare}× the no-op job rate`, met: () => rateShare >= G.rateShare },
      ),
      benchRow(
        `… the same with every start a job of its own (\`DIRIGENT_START_GROUP=1\`), per run`,
        us(f.runsAlone),
        'runs/s',
        `${(1 / ratio(f.runsAlone, f.noop)).toFixed(2)}× the no-op job rate`,
      ),
      benchRow(
        `… the same with the call a tool job (run and tool workers apart), per run`,
        us(f.runsJobs),
        'runs/s',
        `${(1 / ratio(f.runsJobs, f.noop)).toFixed(2)}× the no-op job rate`,
      ),
      benchRow(
        `… the run jobs alone: the same starts (in groups, as the client sends them), taken by a worker that returns at once (no engine, no call, no store write), per run`,
        us(f.runJob),
        'runs/s',
        `${ratio(f.runJob, f.noop).toFixed(2)}× the no-op job's time: the floor under a run's own work`,
      ),
      benchRow(`BullMQ: ${SIZE.runs} no-op jobs added at once, per job`, us(f.noop), 'jobs/s'),
      benchRow(
        `Dirigent: foreach over ${items} items (\`parallel="${SIZE.items}"\`, echo), per item`,
        us(f.foreach),
        'items/s',
        `**${foreachRatio.toFixed(2)}×** the flow (whole run ` +
          `${((median(us(f.foreach)) * SIZE.items) / 1000).toFixed(0)} ms)`,
        { text: `≤ ${G.foreachRatio}× the flow`, met: () => foreachRatio <= G.foreachRatio },
      ),
      benchRow(
        `BullMQ FlowProducer: a parent with ${items} no-op children, per child`,
        us(f.flow),
        'children/s',
        `baseline (whole flow ${((median(us(f.flow)) * SIZE.items) / 1000).toFixed(0)} ms)`,
      ),
      benchRow(
        `Dirigent: ${SIZE.waiting} runs started at once, parked at an \`<instruction>\`, per run`,
        perRun(f.waiting),
        'runs/s',
        `**${kb(waitingBytes)}** of Redis per waiting run (\`used_memory\`: ` +
          `${kb(median(f.waiting.map((w) => w.used)))}); ${(waitingBytes / emptyBytes).toFixed(1)}× ` +
          'an empty job',
        {
          text: `< ${G.bytesPerWaitingRun / KB} KB of Redis per waiting run`,
          met: () => waitingBytes < G.bytesPerWaitingRun,
        },
      ),
      benchRow(
        `… the same with a directive as long as a real one (${(longText / KB).toFixed(1)} KB: ${LONG_WAITING_PADDING} more steps after the instruction), per run`,
        perRun(f.waitingLong),
        'runs/s',
        `**${kb(longBytes)}** of Redis per waiting run: the directive's text is kept once for all ` +
          'its runs, not in each',
        {
          text: `< ${G.bytesPerWaitingRun / KB} KB of Redis per waiting run`,
          met: () => longBytes < G.bytesPerWaitingRun,
        },
      ),
      benchRow(
        `BullMQ: ${SIZE.waiting} empty jobs added at once and left waiting, per job`,
        perRun(f.empty),
        'jobs/s',
        `reference: **${kb(emptyBytes)}** per job (\`used_memory\`: ` +
          `${kb(median(f.empty.map((e) => e.used)))})`,
      ),
    ],
    notes: [
      'Both sides run in this process on one Redis: Dirigent as one `RunWorker` and one ' +
        '`ToolWorker`, wired as `dirigent worker` wires them when it serves both queues (a ' +
        "step's call runs in process on the tool worker when it has a free slot: an eager call; " +
        'foreach items are tool jobs), or apart for the "tool job" rows, as workers serving one ' +
        'queue each are; runs started with `RunsClient.start(…, ' +
        '{ detach: true })`; BullMQ as one `Worker` per queue (two for the flow: parent and ' +
        `children). Every worker has concurrency ${CONCURRENCY}. Each side of each round has its ` +
        'own key prefix, deleted afterwards, and is warmed up (a run or batch) before timing. ' +
        "Times run from the first enqueue to the worker's `completed` event of the last run job " +
        '(Dirigent) or last job (BullMQ): neither includes telling a client through ' +
        `\`QueueEvents\`. A round's figure is the median of ${SIZE.stepReps} sequential runs ` +
        `(chains), ${SIZE.batchReps} batches of runs (jobs) or ${SIZE.foreachReps} foreach runs ` +
        '(flows); finished jobs are kept on both sides as Dirigent keeps its tool jobs. The memory rows ' +
        'time starting and parking the runs (or adding the jobs); their memory is in the ' +
        'comparison column.',
      `Where the time goes, per step, run or item (medians over rounds): sequence ${cpu(f.sequence)} ` +
        `(as tool jobs ${cpu(f.sequenceJobs)}); chain ${cpu(f.chain)}. One-step runs ` +
        `${cpu(f.runs)} (as tool jobs ${cpu(f.runsJobs)}); no-op jobs ${cpu(f.noop)}. ` +
        `Foreach ${cpu(f.foreach)}; flow ${cpu(f.flow)}. Node CPU is this process (client and ` +
        "workers); Redis CPU is the whole server's, so other clients of this Redis count too. " +
        'Node and Redis share the cores: where Node CPU comes close to the wall time, this ' +
        'process (the engine, and encoding, sending and parsing Redis commands) sets the pace, ' +
        `not waiting on Redis. Per step the run costs ${cpuRatio(f.sequence, f.chain)}× the ` +
        `chain's Node CPU and sends ${commandRatio(profiled.sequence, profiled.chain)}× its ` +
        `commands; per one-step run, ${cpuRatio(f.runs, f.noop)}× and ` +
        `${commandRatio(profiled.runs, profiled.noop)}× a no-op job's.`,
      'Redis commands sent by the clients (MONITOR over profiled work after the rounds; ' +
        'commands inside Lua scripts not counted; a script is named by its first key). Per step: ' +
        `Dirigent ${describeCommands(profiled.sequence, SIZE.steps)}; chain ` +
        `${describeCommands(profiled.chain, SIZE.steps)}. Per one-step run (${PROFILED_BATCH} at ` +
        `once): ${describeCommands(profiled.runs, PROFILED_BATCH)}; per no-op job: ` +
        `${describeCommands(profiled.noop, PROFILED_BATCH)}.`,
      'What sets the sequence and one-step rows (see docs/redis.md, "What a step and a run cost"): with its call in ' +
        'process a step costs no job at all, only the engine and the call, and the run is stored ' +
        'promptly after each call (writes gathered while one is under way), so a fast sequence ' +
        'is written a few times and a one-step run once. Runs started together share jobs ' +
        `(groups of up to ${DEFAULT_START_GROUP} starts, driven by the worker that takes the ` +
        'batch), so a one-step run is its share of a job, the engine, its call and one write ' +
        `(the batches' jobs alone take ${ratio(f.runJob, f.noop).toFixed(2)}× a no-op job's ` +
        'time per run); each start a job of its own, it is a whole job more. As tool jobs, a ' +
        'step costs its job (as a chain link does) plus the engine and the worker around it, and ' +
        'a one-step run a tool job more. Either way a run is claimed in the store in the same ' +
        'script that reads it (no per-run mutex). What is left above the no-op job is Node CPU ' +
        'per run (the comparison above): the engine (inputs validated, an xstate actor started ' +
        'and stepped), the call, and the run record written with its indexes; ' +
        'docs/redis.md takes these apart.',
      `Memory: the growth of \`MEMORY USAGE … SAMPLES 0\` summed over every key under the ` +
        `prefix, per run (or job), is the figure judged; the server's \`used_memory\` (other ` +
        "clients' activity shows in it) is given beside it. Per waiting run, by key: " +
        describeMemory(f.waiting, kb) +
        `; without its finished run job (kept by the start job's \`removeOnComplete\`) a ` +
        `waiting run would hold ${kb(withoutRunJob)}. Per empty job: ` +
        describeMemory(f.empty, kb) +
        '.',
    ],
  };
}

/** How many times the commands of `subject` those of `baseline` are (both per operation). */
function commandRatio(subject: Map<string, number>, baseline: Map<string, number>): string {
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  return (total(subject) / total(baseline)).toFixed(1);
}

/** The biggest kinds of key, bytes per run (medians over rounds). */
function describeMemory(xs: readonly Growth[], kb: (bytes: number) => string): string {
  const kinds = new Set(xs.flatMap((x) => [...x.byKind.keys()]));
  return [...kinds]
    .map((kind) => [kind, median(xs.map((x) => x.byKind.get(kind) ?? 0))] as const)
    .filter(([, bytes]) => Math.abs(bytes) >= 16)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, bytes]) => `\`${kind}\` ${kb(bytes)}`)
    .join(', ');
}
