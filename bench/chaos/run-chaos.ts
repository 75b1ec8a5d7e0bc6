/**
 * The chaos run: three `dirigent worker` processes and a private Redis (append-only, synced at
 * every write) run a stream of mixed runs (sequences, a foreach, retries, waits answered by
 * signals, child directives) while workers are killed with SIGKILL every few seconds, Redis is
 * restarted and a worker is paused (SIGSTOP) past its lease. At the end every run must have
 * completed, every run record must hold each of its steps once, and every side effect its tools
 * guard must be in `effects.log` exactly once; calls made again (at least once, around a lost
 * worker) are counted, and takeover times are read from the workers' logs.
 */
import { mkdtempSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { DirectiveLoader } from '../../src/engine/directive-loader.js';
import type { RunRecord, RunStatus } from '../../src/engine/run-record.js';
import { ItemResolver } from '../../src/items/item-resolver.js';
import { defaultSpaces } from '../../src/items/space.js';
import { QueueName } from '../../src/redis/queue-names.js';
import { RedisRunStore } from '../../src/redis/run-store/redis-run-store.js';
import type { RunJobData, RunSource } from '../../src/redis/run-job.js';
import { runSourceOf } from '../../src/redis/run-source.js';
import { RunsClient } from '../../src/redis/client/runs-client.js';
import { CHAOS_KINDS, writeChaosDirectives, type ChaosKind } from './chaos-directives.js';
import { PrivateRedis } from '../local-redis/private-redis.js';
import { WorkerPool } from './worker-pool.js';

/** How hard and how long the chaos run goes. */
export interface ChaosOptions {
  /** The CLI entry (`dist/cli/main.js`). */
  cli: string;
  /** How long workers are killed, ms; runs are started over the first 70% of it. */
  durationMs: number;
  /** Runs started in all. */
  runs: number;
  /** Workers (default 3). */
  workers?: number;
  /** A random worker is killed this often, ms (default 4 s). */
  killEveryMs?: number;
  /** Redis restarts, evenly spread (default 2). */
  redisRestarts?: number;
  /** Workers paused past their lease (default 1). */
  pauses?: number;
  /** How long the runs may take to end after the chaos, ms (default 120 s). */
  settleMs?: number;
  /** Told of what happens, a line at a time. */
  progress?: (line: string) => void;
}

/** What the chaos run found. */
export interface ChaosReport {
  runs: number;
  /** The runs started, by final status (`running`, `waiting` or `unseen` when time was up). */
  statuses: Record<string, number>;
  /**
   * Runs that did not complete, or whose record does not hold each step once: id and why (the
   * error, and a failed child's own).
   */
  wrongRuns: string[];
  /** The workers' log lines that name a wrong run or its children (at most 40). */
  wrongRunLines: string[];
  /** Guarded side effects missing (lost) or present more than once (duplicated). */
  lostEffects: string[];
  /** Effects made (their guard exists) whose line a call killed right after the guard never wrote. */
  cutEffects: string[];
  duplicatedEffects: string[];
  /** Tool calls made again (beyond one per guarded effect). */
  repeatedCalls: number;
  kills: number;
  /** Time from each kill to the first takeover of the killed worker's jobs, ms (none when it had no jobs). */
  takeoversMs: number[];
  redisRestartsMs: number[];
  pauses: number;
  seconds: number;
  runsPerSecond: number;
  /** Nothing lost, nothing duplicated, every run as expected. */
  ok: boolean;
}

/** The step names each kind's run record must hold, once each, in order. */
const STEPS: Record<string, string[]> = {
  chaos_seq: ['a', 'b', 'c'],
  chaos_foreach: ['each'],
  chaos_retry: ['flaky'],
  chaos_wait: ['pre', 'ask', 'post'],
  chaos_parent: ['pre', 'child', 'post'],
};

const PREFIX = 'chaos';

/** Runs the chaos run (see the module comment) and reports what it found. */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const say = options.progress ?? (() => undefined);
  const root = mkdtempSync(join(tmpdir(), 'dirigent-chaos-'));
  const project = join(root, 'project');
  const redis = await PrivateRedis.start(root);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    REDIS_URL: redis.url,
    DIRIGENT_PREFIX: PREFIX,
    DIRIGENT_LOG_LEVEL: process.env.CHAOS_LOG_LEVEL || 'info',
    DIRIGENT_LOG_FORMAT: 'json',
  };
  delete env.DIRIGENT_LOCK_MS;
  delete env.DIRIGENT_WORKER_LEASE_MS;
  const files = writeChaosDirectives(project);
  const pool = new WorkerPool(options.cli, env, project, options.workers ?? 3);
  const conn = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
  conn.on('error', () => undefined);
  const client = new RunsClient(conn, PREFIX);
  const store = new RedisRunStore(conn, { prefix: PREFIX });
  const runsQueue = new Queue<RunJobData>(QueueName.RUNS, { connection: conn, prefix: PREFIX });
  runsQueue.on('error', () => undefined); // Redis restarting: the loops try again
  try {
    await pool.start();
    say(`${pool.workers.length} workers serve ${project} on ${redis.url}`);
    const sources = await sourcesOf(project, files);
    const started = Date.now();
    const submitting = submitRuns(client, sources, options, say);
    const signalling = signalWaitingRuns(conn, runsQueue, () => Date.now() - started);
    const restartsMs = await unleashChaos(pool, redis, options, say);
    say(`chaos over after ${Math.round((Date.now() - started) / 1000)} s; waiting for the runs`);
    const runIds = await submitting;
    const statuses = await untilEnded(conn, runIds, options.settleMs ?? 120_000);
    const seconds = (Date.now() - started) / 1000;
    signalling.stop();
    const report = await check(store, project, runIds, statuses, pool.lines);
    if (process.env.CHAOS_LOG_FILE) await writeChaosLog(process.env.CHAOS_LOG_FILE, conn, pool);
    return {
      ...report,
      kills: pool.kills.length,
      takeoversMs: takeoverTimes(pool),
      redisRestartsMs: restartsMs,
      pauses: options.pauses ?? 1,
      seconds,
      runsPerSecond: options.runs / seconds,
    };
  } finally {
    await pool.close();
    await runsQueue.close().catch(() => undefined);
    await client.close().catch(() => undefined);
    conn.disconnect();
    await redis.down();
    rmSync(root, { recursive: true, force: true });
  }
}

async function sourcesOf(project: string, files: Map<string, string>) {
  const loader = new DirectiveLoader(project);
  const items = new ItemResolver(defaultSpaces(project));
  const out = new Map<string, RunSource>();
  for (const [id, file] of files)
    out.set(id, await runSourceOf(await loader.loadFile(file), items));
  return out;
}

/** The kind of run number `i`. */
function kindOf(i: number): ChaosKind {
  return CHAOS_KINDS[i % CHAOS_KINDS.length]!;
}

/** How many runs start together in a burst (see {@link submitRuns}). */
const BURST = 10;

/**
 * Starts the runs evenly over 70% of the duration and resolves with their ids, by number. Runs go
 * by groups of {@link BURST}: every other group is a burst of starts made at once with no run ids,
 * which the client sends as one group of starts (its run ids the batch names); the other groups'
 * runs start one by one under ids of their own, each again until Redis takes it.
 */
async function submitRuns(
  client: RunsClient,
  sources: Map<string, RunSource>,
  options: ChaosOptions,
  say: (line: string) => void,
): Promise<string[]> {
  const spacing = (options.durationMs * 0.7) / options.runs;
  const t0 = Date.now();
  const ids: string[] = [];
  const source = (i: number) => sources.get(kindOf(i).id)!;
  for (let i = 0; i < options.runs; ) {
    const wait = t0 + i * spacing - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const burst = Math.floor(i / BURST) % 2 === 0;
    const group = Array.from(
      { length: Math.min(burst ? BURST : 1, options.runs - i) },
      (_, k) => i + k,
    );
    for (;;) {
      try {
        if (burst)
          ids.push(
            ...(await Promise.all(group.map((n) => client.start(source(n), { key: `k${n}` })))),
          );
        else ids.push(await client.start(source(i), { key: `k${i}` }, { runId: `run-${i}` }));
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100)); // Redis restarting: try again
      }
    }
    i += group.length;
  }
  say(`${options.runs} runs started, half of them in bursts of ${BURST}`);
  return ids;
}

/** Answers every waiting run's `ask` step with a signal job (one per run: its id is fixed). */
function signalWaitingRuns(conn: Redis, runs: Queue<RunJobData>, _elapsed: () => number) {
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      try {
        for (const runId of await conn.zrange(`${PREFIX}:runs:status:waiting`, 0, -1))
          await runs.add(
            'signal',
            { kind: 'signal', runId, name: 'ask', payload: 'yes' },
            { jobId: `${runId}.ask`, removeOnComplete: false, removeOnFail: false },
          );
      } catch {
        // Redis restarting: next round
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  };
  void loop();
  return { stop: () => void (stopped = true) };
}

/** Kills, restarts and pauses for the duration; resolves with how long each Redis restart took. */
async function unleashChaos(
  pool: WorkerPool,
  redis: PrivateRedis,
  options: ChaosOptions,
  say: (line: string) => void,
): Promise<number[]> {
  const { durationMs } = options;
  const every = options.killEveryMs ?? 4000;
  const restarts = options.redisRestarts ?? 2;
  const pauses = options.pauses ?? 1;
  const events: { at: number; what: () => Promise<unknown> }[] = [];
  const restartsMs: number[] = [];
  const random = () => Math.floor(Math.random() * pool.workers.length);
  for (let at = every; at < durationMs; at += every)
    events.push({
      at,
      what: async () => {
        const slot = random();
        if (pool.isBusy(slot)) return say(`worker ${slot} still restarting: not killed`);
        say(`kill worker ${slot}`);
        await pool.kill(slot, 500);
      },
    });
  for (let k = 1; k <= restarts; k++)
    events.push({
      at: (durationMs * k) / (restarts + 1) + every / 2,
      what: async () => {
        say('restart Redis');
        restartsMs.push(await redis.restart());
      },
    });
  for (let k = 1; k <= pauses; k++)
    events.push({
      at: (durationMs * (2 * k - 1)) / (2 * pauses) + every / 4,
      what: async () => {
        const slot = random();
        if (pool.isBusy(slot)) return say(`worker ${slot} still restarting: not paused`);
        say(`pause worker ${slot} past its lease`);
        await pool.pause(slot, 5000);
      },
    });
  events.sort((a, b) => a.at - b.at);
  const t0 = Date.now();
  const under: Promise<unknown>[] = [];
  for (const e of events) {
    const wait = t0 + e.at - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    under.push(e.what().catch((err: unknown) => say(`chaos step failed: ${String(err)}`)));
  }
  const rest = t0 + durationMs - Date.now();
  if (rest > 0) await new Promise((r) => setTimeout(r, rest));
  await Promise.all(under);
  return restartsMs;
}

const ENDED: ReadonlySet<string> = new Set<RunStatus>(['completed', 'failed', 'cancelled']);

/** Waits until the runs started have ended, or `ms`; resolves with their counts by status. */
async function untilEnded(
  conn: Redis,
  runIds: readonly string[],
  ms: number,
): Promise<Record<string, number>> {
  const runs = runIds.length;
  const deadline = Date.now() + ms;
  for (;;) {
    const pipeline = conn.pipeline();
    for (const id of runIds) pipeline.hget(`${PREFIX}:run:${id}`, 'status');
    const replies = (await pipeline.exec()) ?? [];
    const statuses: Record<string, number> = {};
    for (const [, status] of replies) {
      const s = typeof status === 'string' ? status : 'unseen';
      statuses[s] = (statuses[s] ?? 0) + 1;
    }
    const ended = Object.entries(statuses)
      .filter(([s]) => ENDED.has(s))
      .reduce((a, [, n]) => a + n, 0);
    if (ended >= runs || Date.now() > deadline) return statuses;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Checks every run's record and the effects its tools left. */
async function check(
  store: RedisRunStore,
  project: string,
  runIds: readonly string[],
  statuses: Record<string, number>,
  lines: readonly string[],
) {
  const runs = runIds.length;
  const wrongRuns: string[] = [];
  const wrongIds = new Set<string>();
  const expected: string[] = [];
  const why = (record: RunRecord | undefined) =>
    `${record?.status ?? 'missing'} ${record?.error ? `${record.error.code}: ${record.error.message}` : ''}`;
  for (let i = 0; i < runs; i++) {
    const kind = kindOf(i);
    expected.push(...kind.effects(`k${i}`));
    const id = runIds[i]!;
    const stored = await store.load(id);
    const record: RunRecord | undefined = stored?.record;
    const names = record?.steps.map((s) => s.name) ?? [];
    if (record?.status !== 'completed') {
      const children = Object.values(stored?.children ?? {});
      const records = await Promise.all(children.map(async (id) => (await store.load(id))?.record));
      const told = records.map((c, k) => ` (child ${children[k]}: ${why(c)})`).join('');
      wrongRuns.push(`${id} (${kind.id}): ${why(record)}${told}`);
      for (const wrong of [id, ...children]) wrongIds.add(wrong);
    } else if (JSON.stringify(names) !== JSON.stringify(STEPS[kind.id]))
      wrongRuns.push(`${id} (${kind.id}): steps ${names.join(',')}`);
  }
  const wrongRunLines = lines
    .filter((line) => [...wrongIds].some((id) => new RegExp(`\\b${id}\\b`).test(line)))
    .slice(0, 40);
  const count = (file: string) => {
    const seen = new Map<string, number>();
    if (!existsSync(join(project, file))) return seen;
    for (const line of readFileSync(join(project, file), 'utf8').split('\n'))
      if (line !== '') seen.set(line, (seen.get(line) ?? 0) + 1);
    return seen;
  };
  const effects = count('effects.log');
  const calls = count('calls.log');
  // An effect is made when its guard is (an atomic mkdir); its line in effects.log follows, and a
  // call killed with its worker between the two leaves the effect made but not logged.
  const guarded = (e: string) => existsSync(join(project, 'fx', e.replace(' ', '.')));
  const unlogged = expected.filter((e) => (effects.get(e) ?? 0) === 0);
  const lostEffects = unlogged.filter((e) => !guarded(e));
  const cutEffects = unlogged.filter(guarded);
  const duplicatedEffects = expected.filter((e) => (effects.get(e) ?? 0) > 1);
  const repeatedCalls = [...calls.values()].reduce((a, n) => a + n, 0) - calls.size;
  return {
    runs,
    statuses,
    wrongRuns,
    wrongRunLines,
    lostEffects,
    cutEffects,
    duplicatedEffects,
    repeatedCalls,
    ok: wrongRuns.length === 0 && lostEffects.length === 0 && duplicatedEffects.length === 0,
  };
}

/** For each kill, the time until another worker took over the killed worker's jobs. */
function takeoverTimes(pool: WorkerPool): number[] {
  const takeovers = pool.lines.flatMap((line) => {
    const m = /took over \d+ job\(s\) of worker (\S+?),/.exec(line);
    if (!m) return [];
    const time = Number(/"time":(\d+)/.exec(line)?.[1] ?? NaN);
    return Number.isFinite(time) ? [{ name: m[1]!, time }] : [];
  });
  const out: number[] = [];
  for (const k of pool.kills) {
    const first = takeovers
      .filter((t) => k.leases.includes(t.name) && t.time >= k.at)
      .sort((a, b) => a.time - b.time)[0];
    if (first) out.push(first.time - k.at);
  }
  return out;
}

/**
 * Writes every line the workers logged to `file`, then, for each run that has not ended, its hash
 * and the state of its run job: where a run stands that nobody drives (`CHAOS_LOG_FILE`).
 */
async function writeChaosLog(file: string, conn: Redis, pool: WorkerPool): Promise<void> {
  const out = [...pool.lines];
  const ids = await conn.zrange(`${PREFIX}:runs:status:running`, 0, -1);
  for (const id of ids) {
    const hash = await conn.hgetall(`${PREFIX}:run:${id}`);
    const job = await conn.hmget(
      `${PREFIX}:${QueueName.RUNS}:${id}`,
      'processedOn',
      'finishedOn',
      'failedReason',
      'ats',
    );
    const where = [];
    for (const set of ['wait', 'active', 'delayed', 'completed', 'failed', 'prioritized'])
      if ((await conn.type(`${PREFIX}:${QueueName.RUNS}:${set}`)) === 'list') {
        if ((await conn.lpos(`${PREFIX}:${QueueName.RUNS}:${set}`, id)) !== null) where.push(set);
      } else if ((await conn.zscore(`${PREFIX}:${QueueName.RUNS}:${set}`, id)) !== null)
        where.push(set);
    const calls = [];
    for (const key of await conn.keys(`${PREFIX}:${QueueName.TOOLS}:${id}.*`)) {
      if (key.endsWith(':lock') || key.endsWith(':logs')) continue;
      const [finished, data] = await conn.hmget(key, 'finishedOn', 'data');
      calls.push(
        `${key.slice(PREFIX.length)} finished ${finished} replyTo ${String(JSON.parse(data ?? '{}').replyTo)}`,
      );
    }
    const mark = await conn.get(`${PREFIX}:parked:${id}`);
    out.push(
      `UNENDED ${id} ${JSON.stringify(hash)} job ${JSON.stringify(job)} in ${where.join(',') || 'no set'}; parked mark ${mark}; calls ${calls.join(' | ')}`,
    );
  }
  writeFileSync(file, out.join('\n') + '\n');
}
