/**
 * What a {@link DirigentWorker} is made with: {@link DirigentWorkerOptions} as a program (or the
 * `dirigent worker` command, or a container's environment) gives them, every field optional with
 * its default said, and {@link CompiledWorkerOptions}, the same with every default filled in and
 * checked once by {@link compileWorkerOptions}: the only form the worker's parts are given.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { needsRedis } from '../errors/deployment-errors.js';
import { fileNotFound, notAFolder } from '../errors/file-errors.js';
import { badOptionValue } from '../errors/request-errors.js';
import { DEFAULT_PREFIX } from '../redis/queue-names.js';
import { redisUrl } from '../redis/redis-url.js';
import { workerLeaseMs } from '../redis/takeover/worker-lease.js';
import { msFromEnv, workerTiming, type WorkerTiming } from '../redis/worker-timing.js';
import { EAGER_SLOT_WAIT_MS } from '../redis/tool-worker/slot-waits.js';
import { createLogger } from '../telemetry/create-logger.js';
import type { Logger } from '../telemetry/logger.js';
import { Telemetry, type TelemetryOptions } from '../telemetry/telemetry.js';
import { chosenShardCount, layoutFor } from '../redis/shards/shard-count.js';
import type { ShardLayout } from '../redis/shards/shard-layout.js';
import { replicaWaitOf, type ReplicaWait } from '../redis/run-store/replica-wait.js';
import { parseRedisUrl } from '../redis/redis-endpoint.js';

/** The queues a worker can take jobs from. */
export const WORKER_QUEUES = ['runs', 'tools', 'triggers'] as const;

/**
 * A queue a worker takes jobs from: `runs` (it drives runs), `tools` (it runs tool calls, and the
 * project's services), `triggers` (it starts the runs of queue jobs and schedules).
 */
export type WorkerQueue = (typeof WORKER_QUEUES)[number];

/** What a {@link DirigentWorker} is made with; every field is optional. */
export interface DirigentWorkerOptions {
  /**
   * The deployment's Redis, as a URL. Default: `$REDIS_URL`; with neither, the worker cannot be
   * made (`NEEDS_REDIS`).
   */
  redis?: string;
  /** The deployment's key prefix in Redis. Default: `$DIRIGENT_PREFIX`, else `dirigent`. */
  prefix?: string;
  /**
   * How many shards the deployment spreads its runs over (see `docs/scaling.md`): every process of
   * a deployment must agree. Default: `$DIRIGENT_SHARDS`, else the project's `shards`, else 1.
   */
  shards?: number;
  /**
   * The shards this worker serves (numbers from 0). Default: `$DIRIGENT_WORKER_SHARDS` (a
   * comma-separated list), else every shard.
   */
  shardsServed?: readonly number[];
  /**
   * The project served: directives and tools resolve in it, whatever machine started the run.
   * Default: `$DIRIGENT_PROJECT`, else the current folder. It must be a folder.
   */
  project?: string;
  /** The queues served, at least one. Default: all of them (`runs`, `tools`, `triggers`). */
  queues?: readonly WorkerQueue[];
  /** Tool jobs run at once, a whole number of at least 1. Default 8. */
  toolConcurrency?: number;
  /** Runs driven at once (they mostly wait on tool jobs), at least 1. Default 50. */
  runConcurrency?: number;
  /**
   * How long a step's call that this worker would run itself (an eager call) waits for one of its
   * tool slots when all are taken, ms, before it goes to the tools queue as a job; 0: not at all.
   * Default: `$DIRIGENT_SLOT_WAIT_MS`, else 100.
   */
  slotWaitMs?: number;
  /**
   * This worker's lease, ms: others take its runs and calls over this long after it stops
   * renewing it. It is renewed every sixth of it, so an event loop held up for up to five sixths
   * of it at once never makes a live worker look dead, and a worker whose event loop keeps
   * stalling asks for up to three times as long; a longer lease tolerates longer stalls and moves a
   * dead worker's work later. Default: `$DIRIGENT_WORKER_LEASE_MS` (at least 300), else 1500
   * (renewed every 250 ms, a stall of 1.25 s always tolerated).
   */
  leaseMs?: number;
  /**
   * BullMQ's job locks, ms: the backstop for a dead worker's jobs when no worker is left to see its
   * lease lapse, and the lease of a service's claim. Default: `$DIRIGENT_LOCK_MS` (at least 500),
   * else 30000.
   */
  lockMs?: number;
  /**
   * Start the project's services (tools that declare `bootstrap`) beside the jobs. Default: true
   * when the worker serves `tools`; never without `tools`.
   */
  services?: boolean;
  /** Where the spans and metrics of runs, calls and queues go. Default: none. */
  telemetry?: Telemetry | TelemetryOptions;
  /**
   * Where the worker logs what happens to runs, calls and itself, and an `error` event no listener
   * takes. Default: the process's logger (`createLogger`: JSON lines on standard error, as
   * `$DIRIGENT_LOG_LEVEL` and `$DIRIGENT_LOG_FORMAT` say).
   */
  logger?: Logger;
  /** Where the defaults above are read from. Default: `process.env`. */
  env?: Record<string, string | undefined>;
}

/** {@link DirigentWorkerOptions} with every default filled in and checked. */
export interface CompiledWorkerOptions {
  readonly redisUrl: string;
  readonly prefix: string;
  /** The deployment's layout over Redis. */
  readonly layout: ShardLayout;
  /** The shards served, ascending. */
  readonly shardsServed: readonly number[];
  /** How run workers wait for replicas (`DIRIGENT_REPLICA_WAIT`), if they do. */
  readonly replicaWait: ReplicaWait | undefined;
  /** Absolute. */
  readonly projectDir: string;
  /** In the order of {@link WORKER_QUEUES}. */
  readonly queues: readonly WorkerQueue[];
  readonly toolConcurrency: number;
  readonly runConcurrency: number;
  readonly slotWaitMs: number;
  readonly leaseMs: number;
  readonly timing: WorkerTiming;
  readonly services: boolean;
  readonly telemetry: Telemetry | undefined;
  readonly logger: Logger;
}

/** The default of {@link DirigentWorkerOptions.toolConcurrency}. */
export const DEFAULT_TOOL_CONCURRENCY = 8;
/** The default of {@link DirigentWorkerOptions.runConcurrency}. */
export const DEFAULT_RUN_CONCURRENCY = 50;

/**
 * Fills in the defaults of `options` and checks them: `NEEDS_REDIS` without a Redis URL,
 * `INVALID_REQUEST` for a queue or a number out of range, `FILE_NOT_FOUND` or `NOT_A_DIRECTORY`
 * for a project that is not a folder.
 */
export function compileWorkerOptions(options: DirigentWorkerOptions = {}): CompiledWorkerOptions {
  const env = options.env ?? process.env;
  const url = redisUrl(options.redis, env);
  if (url === undefined) throw needsRedis('A worker', 'it serves one');
  const queues = checkQueues(options.queues ?? WORKER_QUEUES);
  const projectDir = resolve(options.project ?? (env.DIRIGENT_PROJECT || process.cwd()));
  checkFolder(projectDir);
  const timing =
    options.lockMs === undefined
      ? workerTiming(env)
      : { lockMs: atLeast(options.lockMs, 500, 'lockMs') };
  const prefix = options.prefix || env.DIRIGENT_PREFIX || DEFAULT_PREFIX;
  const layout = layoutFor(url, prefix, chosenShardCount(options.shards, projectDir, env));
  return {
    redisUrl: url,
    prefix,
    layout,
    shardsServed: shardsServed(options.shardsServed, env, layout.count),
    replicaWait: replicaWaitOf(parseRedisUrl(url).kind, env),
    projectDir,
    queues,
    toolConcurrency: atLeast(
      options.toolConcurrency ?? DEFAULT_TOOL_CONCURRENCY,
      1,
      'toolConcurrency',
    ),
    runConcurrency: atLeast(options.runConcurrency ?? DEFAULT_RUN_CONCURRENCY, 1, 'runConcurrency'),
    slotWaitMs:
      options.slotWaitMs === undefined
        ? (msFromEnv(env, 'DIRIGENT_SLOT_WAIT_MS', 0) ?? EAGER_SLOT_WAIT_MS)
        : atLeast(options.slotWaitMs, 0, 'slotWaitMs'),
    leaseMs:
      options.leaseMs === undefined ? workerLeaseMs(env) : atLeast(options.leaseMs, 300, 'leaseMs'),
    timing,
    services: queues.includes('tools') && options.services !== false,
    telemetry: Telemetry.of(options.telemetry),
    logger: options.logger ?? createLogger(env),
  };
}

/**
 * The queues a comma-separated list names (`--queues`, `DIRIGENT_QUEUES`); `INVALID_REQUEST`
 * naming `source` when one is not a queue or there is none.
 */
export function queuesFromList(list: string, source: string): WorkerQueue[] {
  const names = list
    .split(',')
    .map((q) => q.trim())
    .filter((q) => q !== '');
  if (names.length === 0 || names.some((q) => !isQueue(q)))
    throw badOptionValue(source, `one or more of ${WORKER_QUEUES.join(', ')}`, list);
  return names as WorkerQueue[];
}

/**
 * A count given as text (`--concurrency`, `DIRIGENT_CONCURRENCY`); `INVALID_REQUEST` naming
 * `source` unless it is a whole number of at least 1.
 */
export function countFromText(text: string, source: string): number {
  const n = Number(text);
  if (text.trim() === '' || !(Number.isInteger(n) && n >= 1))
    throw badOptionValue(source, 'a whole number of at least 1', text);
  return n;
}

/**
 * The shards a worker serves: `given`, else `DIRIGENT_WORKER_SHARDS`, else all `count` of them;
 * `INVALID_REQUEST` for a number that is no shard.
 */
function shardsServed(
  given: readonly number[] | undefined,
  env: Record<string, string | undefined>,
  count: number,
): number[] {
  const raw = env.DIRIGENT_WORKER_SHARDS;
  const list =
    given ??
    (raw === undefined || raw.trim() === ''
      ? undefined
      : raw.split(',').map((s) => (/^\s*\d+\s*$/.test(s) ? Number(s) : NaN)));
  if (list === undefined) return Array.from({ length: count }, (_, i) => i);
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n < 0 || n >= count))
    throw badOptionValue(
      given !== undefined ? 'shardsServed' : 'DIRIGENT_WORKER_SHARDS',
      `shard numbers from 0 to ${count - 1}`,
      given !== undefined ? given.join(',') : String(raw),
    );
  return [...new Set(list)].sort((a, b) => a - b);
}

function isQueue(name: string): name is WorkerQueue {
  return (WORKER_QUEUES as readonly string[]).includes(name);
}

function checkQueues(given: readonly string[]): WorkerQueue[] {
  if (given.length === 0 || given.some((q) => !isQueue(q)))
    throw badOptionValue(
      "A worker's queues",
      `one or more of ${WORKER_QUEUES.join(', ')}`,
      given.join(', ') || 'none',
    );
  return WORKER_QUEUES.filter((q) => given.includes(q));
}

function atLeast(n: number, min: number, option: string): number {
  if (Number.isInteger(n) && n >= min) return n;
  throw badOptionValue(option, `a whole number of at least ${min}`, String(n));
}

function checkFolder(dir: string): void {
  const hint =
    'Give the folder of the project to serve (`project` option, `dirigent worker --project`, or DIRIGENT_PROJECT).';
  let isFolder: boolean;
  try {
    isFolder = statSync(dir).isDirectory();
  } catch {
    throw fileNotFound(`The project folder ${dir}`, { path: dir, hint });
  }
  if (!isFolder) throw notAFolder(dir, { path: dir, hint });
}
