/**
 * What Redis holds per run: a run that waits (at an `<instruction>`, and at a `<wait>`), against
 * an empty BullMQ job added to a queue and left waiting, in the same Redis and the same run; a run
 * that has ended and is kept for its retention (its hash, body and feed, its index entries and its
 * share of its directive's text; with its finished tool jobs when its calls were jobs); and what
 * is left of ended runs once their retention is over and the store has pruned. Each side gets its
 * own key prefix, as long as the others (see `distributed-bench.ts`, whose deployment it uses),
 * deleted afterwards.
 *
 * Memory is the growth of `MEMORY USAGE … SAMPLES 0` over every key under the prefix while the
 * runs are started and settle (or the jobs are added), per run; `used_memory` (the server's,
 * which other clients move too) is given beside it.
 */
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import type { RedisClient } from '../src/redis/redis-client.js';
import { DirectiveLoader, type LoadedDirective } from '../src/engine/directive-loader.js';
import type { RunRecord, RunStatus } from '../src/engine/run-record.js';
import { QueueName } from '../src/redis/queue-names.js';
import { EVENTS_STREAM_MAX_LEN, queueOptions } from '../src/redis/queue-options.js';
import { connectRedis, pingRedis, redisDownMessage } from '../src/redis/redis-connection.js';
import { RedisRunStore } from '../src/redis/run-store/redis-run-store.js';
import { benchRow, withinRounds } from './bench-row.js';
import type { BenchSection } from './bench-section.js';
import { withDeployment, type Deployment } from './distributed-bench.js';
import { echoSequenceDirective } from './echo-sequence-directive.js';
import type { GeneratedDirective } from './generated-directive.js';
import { median } from './median.js';

/** Runs started at once per measurement. */
const RUNS = 200;
/** Steps of the ended runs (echo calls). */
const STEPS = 5;
/** The goals: a waiting run against an empty job, and bytes of Redis per run. */
export const MEMORY_GOALS = {
  /** A waiting run, at most this many times an empty BullMQ job left waiting. */
  waitingRatio: 5,
  /**
   * What an ended run leaves once its retention is over and the store pruned, besides the queues'
   * event streams (bounded: see {@link EVENTS_STREAM_MAX_LEN}).
   */
  left: 16,
} as const;
/** The retention of the runs measured after it: `<retention days>` of about a second. */
const SHORT_RETENTION_DAYS = 0.000012;
const KB = 1024;

/** How Redis memory grew while work ran, per run. */
interface Growth {
  /** Every key under the prefix (`MEMORY USAGE`), bytes per run. */
  keys: number;
  /** The server's `used_memory`, bytes per run. */
  used: number;
  /** `keys` by key kind (run and job ids left out). */
  byKind: Map<string, number>;
  /** Milliseconds the runs took to start and settle, per run. */
  msPerRun: number;
  /** Entries the runs queue's event stream grew by, per run (where counted). */
  runEvents?: number;
}

/**
 * Measures Redis memory per waiting run and per ended run on the Redis at `REDIS_URL` (default
 * `redis://127.0.0.1:6379`), in `options.rounds` rounds.
 */
export async function memoryBench(options: { rounds: number }): Promise<BenchSection> {
  const url = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  if (!(await pingRedis(url, 2000))) throw new Error(redisDownMessage(url));
  const redis = connectRedis(url);
  const loader = new DirectiveLoader(process.cwd());
  const load = (g: GeneratedDirective) => loader.fromText(g.file, g.text);
  const waiting = load(waitingDirective());
  const signal = load(signalDirective());
  const ended = load(echoSequenceDirective(STEPS));
  const brief = load(briefDirective());
  const f: Measured = { waiting: [], signal: [], empty: [], ended: [], jobs: [] };
  const kept: Growth[] = [];
  const left: Growth[] = [];
  try {
    for (let round = 0; round < options.rounds; round++) {
      // The baseline first or second, turn about, so that neither side is always the one after.
      const baseline = () => emptyJobs(redis).then((g) => f.empty.push(g));
      if (round % 2 === 0) await baseline();
      f.waiting.push(await withDeployment(redis, (d) => grown(redis, d, waiting, 'waiting')));
      f.signal.push(await withDeployment(redis, (d) => grown(redis, d, signal, 'waiting')));
      if (round % 2 === 1) await baseline();
      f.ended.push(await withDeployment(redis, (d) => grown(redis, d, ended, 'completed')));
      f.jobs.push(
        await withDeployment(redis, (d) => grown(redis, d, ended, 'completed'), undefined, {
          eager: false,
        }),
      );
      const [k, l] = await withDeployment(redis, (d) => afterRetention(redis, d, brief));
      kept.push(k);
      left.push(l);
    }
  } finally {
    await redis.quit();
  }
  return section(f, kept, left);
}

/** What each measurement grew by, per run (or job), one entry per round. */
interface Measured {
  /** Runs waiting at an `<instruction>`. */
  waiting: Growth[];
  /** Runs waiting at a `<wait signal>`. */
  signal: Growth[];
  /** Empty BullMQ jobs, added and left waiting: the baseline of a waiting run. */
  empty: Growth[];
  /** Ended runs, calls in process. */
  ended: Growth[];
  /** Ended runs, every call a tool job. */
  jobs: Growth[];
}

/**
 * Memory growth per job while `RUNS` empty jobs are added to a BullMQ queue and left waiting, on
 * a prefix as long as a deployment's, after 5 that make the queue's keys.
 */
async function emptyJobs(redis: RedisClient): Promise<Growth> {
  const prefix = `dirigent-bench:${randomUUID()}`;
  const queue = new Queue('bench-empty', queueOptions(redis, prefix));
  try {
    await Promise.all(Array.from({ length: 5 }, () => queue.add('empty', {})));
    return await growth(redis, prefix, () =>
      Promise.all(Array.from({ length: RUNS }, () => queue.add('empty', {}))),
    );
  } finally {
    await queue.obliterate({ force: true });
    await queue.close();
    const keys = await keysUnder(redis, prefix);
    for (let i = 0; i < keys.length; i += 1000) await redis.unlink(...keys.slice(i, i + 1000));
  }
}

/** Memory growth per run while `RUNS` runs of `loaded` start and settle as `status`. */
async function grown(
  redis: RedisClient,
  d: Deployment,
  loaded: LoadedDirective,
  status: RunStatus,
): Promise<Growth> {
  expectRuns((await d.runMany(loaded, {}, 5)).records, status); // shared keys made first
  const events = `${d.prefix}:${QueueName.RUNS}:events`;
  const eventsBefore = await redis.xlen(events);
  const grew = await growth(redis, d.prefix, async () =>
    expectRuns((await d.runMany(loaded, {}, RUNS)).records, status),
  );
  return { ...grew, runEvents: ((await redis.xlen(events)) - eventsBefore) / RUNS };
}

/**
 * Runs of `brief` (kept about a second): their growth while kept, and what is left of them once
 * their retention is over and the store pruned.
 */
async function afterRetention(
  redis: RedisClient,
  d: Deployment,
  brief: LoadedDirective,
): Promise<[Growth, Growth]> {
  const store = new RedisRunStore(redis, { prefix: d.prefix });
  const expireAll = async () => {
    await new Promise((r) => setTimeout(r, 2100));
    while ((await store.prune()) > 0);
  };
  expectRuns((await d.runMany(brief, {}, 5)).records, 'completed');
  await expireAll();
  const before = await memoryByKind(redis, d.prefix);
  const usedBefore = await usedMemory(redis);
  const keptGrowth = await growth(redis, d.prefix, async () =>
    expectRuns((await d.runMany(brief, {}, RUNS)).records, 'completed'),
  );
  await expireAll();
  const after = await memoryByKind(redis, d.prefix);
  return [keptGrowth, difference(before, after, (await usedMemory(redis)) - usedBefore, 0)];
}

async function growth(
  redis: RedisClient,
  prefix: string,
  work: () => Promise<unknown>,
): Promise<Growth> {
  const before = await memoryByKind(redis, prefix);
  const usedBefore = await usedMemory(redis);
  const t0 = performance.now();
  await work();
  const ms = performance.now() - t0;
  const after = await memoryByKind(redis, prefix);
  return difference(before, after, (await usedMemory(redis)) - usedBefore, ms);
}

function difference(
  before: Map<string, number>,
  after: Map<string, number>,
  used: number,
  ms: number,
): Growth {
  const byKind = new Map<string, number>();
  for (const kind of new Set([...before.keys(), ...after.keys()]))
    byKind.set(kind, ((after.get(kind) ?? 0) - (before.get(kind) ?? 0)) / RUNS);
  const keys = [...byKind.values()].reduce((a, b) => a + b, 0);
  return { keys, used: used / RUNS, byKind, msPerRun: ms / RUNS };
}

function expectRuns(records: readonly RunRecord[], status: RunStatus): void {
  const wrong = records.find((r) => r.status !== status);
  if (wrong !== undefined)
    throw new Error(`run ${wrong.runId} is ${wrong.status}, expected ${status}`);
}

async function usedMemory(redis: RedisClient): Promise<number> {
  const info = await redis.info('memory');
  return Number(info.match(/^used_memory:(\d+)/m)?.[1] ?? NaN);
}

/** The bytes of every key under `prefix`, summed by the key with run and job ids left out. */
async function memoryByKind(redis: RedisClient, prefix: string): Promise<Map<string, number>> {
  const keys = await keysUnder(redis, prefix);
  const pipeline = redis.pipeline();
  for (const key of keys) pipeline.memory('USAGE', key, 'SAMPLES', 0);
  const sizes = ((await pipeline.exec()) ?? []).map(([err, bytes]) => {
    if (err) throw err;
    return Number(bytes ?? 0);
  });
  const byKind = new Map<string, number>();
  keys.forEach((key, i) => {
    const kind = withoutIds(key.slice(prefix.length));
    byKind.set(kind, (byKind.get(kind) ?? 0) + sizes[i]!);
  });
  return byKind;
}

/** Every key under `prefix` (SCAN). */
async function keysUnder(redis: RedisClient, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    keys.push(...found);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

/** A key with UUIDs (and what follows them up to the next `:`) as `<id>`, hashes as `<hash>`. */
function withoutIds(text: string): string {
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}[^:]*/g, '<id>')
    .replace(/[0-9a-f]{64}/g, '<hash>')
    .replace(/:\d[\d.]*(?=:|$)/g, ':<n>');
}

// ---- the directives ----

/** A run that waits for a person at its first step. */
function waitingDirective(): GeneratedDirective {
  const text = `# Waiting run

\`\`\`xml
<directive name="waiting-run" version="1.0.0">
  <metadata><description>Memory benchmark: waits for an answer.</description></metadata>
  <process>
    <step name="ask"><instruction>Approve?</instruction></step>
  </process>
</directive>
\`\`\`
`;
  return { file: 'bench/waiting-run.md', text, steps: 1 };
}

/** A run that waits for a signal at its first step. */
function signalDirective(): GeneratedDirective {
  const text = `# Signal run

\`\`\`xml
<directive name="signal-run" version="1.0.0">
  <metadata><description>Memory benchmark: waits for a signal.</description></metadata>
  <process>
    <step name="hold"><wait signal="go"/></step>
  </process>
</directive>
\`\`\`
`;
  return { file: 'bench/signal-run.md', text, steps: 1 };
}

/** The echo sequence of the ended runs, kept about a second. */
function briefDirective(): GeneratedDirective {
  const g = echoSequenceDirective(STEPS);
  const text = g.text
    .replace('name="echo-sequence"', 'name="brief-sequence"')
    .replace('</metadata>', `  <retention days="${SHORT_RETENTION_DAYS}"/>\n  </metadata>`);
  return { file: 'bench/brief-sequence.md', text, steps: STEPS };
}

// ---- the section ----

/**
 * What each kind of key a waiting run grows holds, and what bounds it (the keys of
 * `redis/run-store/run-hash.ts`, and BullMQ's of the runs queue).
 */
const WAITING_KEYS: Record<string, string> = {
  ':run:<id>':
    'its hash: status, directive, version, etag, claim, feed position, the hash of its text and its step record under way, small values kept as a listpack',
  ':run:<id>:body':
    'its record, snapshot, counters and what never changes, as compact JSON lines in one string',
  ':run:<id>:feed':
    'its events (the run started, its step started, it waits), a list: a key, and what the events say',
  ':runs': 'its entry in the index of all runs',
  ':runs:status:waiting': 'its entry in the index of waiting runs',
  ':runs:directive:waiting-run': "its entry in its directive's index",
  ':runs:directive:signal-run': "its entry in its directive's index",
  ':directive-text:<hash>:runs': "its id in the set of its text's runs",
  [`:${QueueName.RUNS}:events`]: `BullMQ's events of its start job, whose \`completed\` event carries the records of the runs the job started: bounded (${EVENTS_STREAM_MAX_LEN.toLocaleString('en-US')} events), it stops growing with the runs`,
};

function section(f: Measured, kept: Growth[], left: Growth[]): BenchSection {
  const kb = (bytes: number) => `${(bytes / KB).toFixed(2)} KB`;
  const bytes = (xs: readonly Growth[]) => median(xs.map((x) => x.keys));
  /** Bytes per run outside the queues' event streams, which are bounded whatever the runs. */
  const unboundedOf = (x: Growth) =>
    [...x.byKind].filter(([k]) => !k.endsWith(':events')).reduce((a, [, b]) => a + b, 0);
  const unbounded = (xs: readonly Growth[]) => median(xs.map(unboundedOf));
  const used = (xs: readonly Growth[]) => median(xs.map((x) => x.used));
  const us = (xs: readonly Growth[]) => xs.map((x) => x.msPerRun * 1000);
  /** A waiting run's bytes against an empty job's, within each round. */
  const ratio = (xs: readonly Growth[], of: (x: Growth) => number = (x) => x.keys) =>
    withinRounds(xs.map(of), f.empty.map(of), (a, b) => a / b);
  const G = MEMORY_GOALS;
  const perDay = 10_000;
  const week = bytes(f.ended) * perDay * 7;
  const waitingRow = (name: string, xs: readonly Growth[]) =>
    benchRow(
      name,
      us(xs),
      'runs/s',
      `**${kb(bytes(xs))}** of Redis per waiting run (\`used_memory\`: ${kb(used(xs))}); ` +
        `**${ratio(xs).toFixed(1)}×** an empty job`,
      {
        text: `≤ ${G.waitingRatio}× an empty job`,
        met: () => ratio(xs) <= G.waitingRatio,
      },
    );
  const emptyBytes = bytes(f.empty);
  const each = (xs: readonly Growth[]) =>
    byKind(xs)
      .map(([kind, b]) => `\`${kind}\` ${kb(b)} (${(b / emptyBytes).toFixed(2)}×)`)
      .join(', ');
  return {
    title: 'Redis memory per run: waiting, ended and kept, and after the retention',
    rows: [
      waitingRow(
        `${RUNS} runs started at once, waiting at an \`<instruction>\`, per run`,
        f.waiting,
      ),
      waitingRow(`… waiting at a \`<wait signal>\` instead, per run`, f.signal),
      benchRow(
        `BullMQ: ${RUNS} empty jobs added at once and left waiting, per job`,
        us(f.empty),
        'jobs/s',
        `baseline: **${kb(emptyBytes)}** per job (\`used_memory\`: ${kb(used(f.empty))})`,
      ),
      benchRow(
        `${RUNS} runs of ${STEPS} echo steps, calls in process, ended and kept for the retention, per run`,
        us(f.ended),
        'runs/s',
        `**${kb(bytes(f.ended))}** of Redis per ended run (\`used_memory\`: ${kb(used(f.ended))}); ` +
          `${(bytes(f.ended) / bytes(f.waiting)).toFixed(1)}× a waiting run`,
      ),
      benchRow(
        `… the same with every call a tool job (run and tool workers apart), per run`,
        us(f.jobs),
        'runs/s',
        `**${kb(bytes(f.jobs))}** per ended run with its ${STEPS} finished tool jobs, kept an hour ` +
          `(\`used_memory\`: ${kb(used(f.jobs))})`,
      ),
      benchRow(
        `${RUNS} such runs (calls in process) kept about a second (\`<retention days="${SHORT_RETENTION_DAYS}">\`), per run`,
        us(kept),
        'runs/s',
        `**${kb(bytes(kept))}** per run while kept; once expired and pruned, ` +
          `**${Math.round(unbounded(left))} bytes** per run left besides the queues' event ` +
          `streams (\`used_memory\`: ${kb(used(left))})`,
        {
          text: `< ${G.left} bytes left per run (event streams aside)`,
          met: () => unbounded(left) < G.left,
        },
      ),
    ],
    notes: [
      'Each measurement of runs starts them through `RunsClient` on one `RunWorker` and one ' +
        '`ToolWorker` in this process (as the distributed section does), on a key prefix of its ' +
        `own, after ${5} runs that make the keys every run shares (the directive's text, the ` +
        `queues' keys). The baseline adds ${RUNS} empty jobs (\`queue.add('empty', {})\`) to a ` +
        `BullMQ queue with Dirigent's queue options, on a prefix as long, after ${5} that make ` +
        "the queue's keys; it is measured in every round, before or after the runs in turn. " +
        'Memory is the growth of `MEMORY USAGE … SAMPLES 0` over every key under the prefix, per ' +
        "run (or job), the figure judged; the server's `used_memory` is given beside it. The time " +
        'column is starting the runs until their run jobs settle (adding the jobs), per run.',
      `Per waiting run at an \`<instruction>\`, by key, each against an empty job: ` +
        `${each(f.waiting)}. At a \`<wait signal>\`: ${each(f.signal)}. Per empty job: ` +
        `${describe(f.empty, kb)}.`,
      'What each holds, and what bounds it: ' +
        byKind(f.waiting)
          .map(([kind]) => `\`${kind}\`, ${WAITING_KEYS[kind] ?? 'not told apart here'}`)
          .join('; ') +
        '. ' +
        streamBound(f.waiting, kb) +
        ' An index is a sorted set, and past 128 entries (`zset-max-listpack-entries`) Redis ' +
        'keeps it as a skiplist: about 140 bytes an entry (the 36-character id, its skiplist ' +
        "node and its dict entry), as any index of runs by id would take. Without the queues' " +
        `event streams, a waiting run holds ${kb(unbounded(f.waiting))}, ` +
        `${ratio(f.waiting, unboundedOf).toFixed(1)}× an empty job without its own.`,
      `Per ended run (calls in process), by key: ${describe(f.ended, kb)}. With every call a ` +
        `tool job: ${describe(f.jobs, kb)}.`,
      `What an ended run leaves once its retention is over and the store has pruned, by key: ` +
        `${describe(left, kb) || 'nothing'}. The queues' event streams keep their last ` +
        `${EVENTS_STREAM_MAX_LEN.toLocaleString('en-US')} events each, whatever runs they were ` +
        'about: they grow with the first runs, then stay.',
      `At the default retention (7 days), a deployment that ends ${perDay.toLocaleString('en-US')} ` +
        `runs a day keeps ${(perDay * 7).toLocaleString('en-US')} ended runs: about ` +
        `${(week / KB / KB).toFixed(0)} MB of Redis at ${kb(bytes(f.ended))} a run.`,
    ],
  };
}

/**
 * When the runs queue's event stream stops growing with waiting runs: its events per run (a start
 * job's, shared by a group of starts), its bytes per run, and its cap.
 */
function streamBound(xs: readonly Growth[], kb: (bytes: number) => string): string {
  const events = median(xs.map((x) => x.runEvents ?? 0));
  const bytes = median(xs.map((x) => x.byKind.get(`:${QueueName.RUNS}:events`) ?? 0));
  if (!(events > 0)) return '';
  const runs = EVENTS_STREAM_MAX_LEN / events;
  return (
    `The runs queue's event stream grew by ${events.toFixed(2)} events per run (${kb(bytes)}): ` +
    `at its cap of ${EVENTS_STREAM_MAX_LEN.toLocaleString('en-US')} events it stops growing, ` +
    `after about ${Math.round(runs / 1000).toLocaleString('en-US')},000 runs started so, at about ` +
    `${((runs * bytes) / KB / KB).toFixed(0)} MB.`
  );
}

/** The kinds of key that grew by 16 bytes or more per run, biggest first (medians over rounds). */
function byKind(xs: readonly Growth[]): [string, number][] {
  const kinds = new Set(xs.flatMap((x) => [...x.byKind.keys()]));
  return [...kinds]
    .map((kind): [string, number] => [kind, median(xs.map((x) => x.byKind.get(kind) ?? 0))])
    .filter(([, b]) => Math.abs(b) >= 16)
    .sort((a, b) => b[1] - a[1]);
}

/** {@link byKind} in words. */
function describe(xs: readonly Growth[], kb: (bytes: number) => string): string {
  return byKind(xs)
    .map(([kind, b]) => `\`${kind}\` ${kb(b)}`)
    .join(', ');
}
