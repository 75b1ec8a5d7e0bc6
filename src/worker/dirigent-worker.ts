/**
 * A Dirigent worker: the composition root of what serves a deployment from one process. It makes,
 * for the queues it serves, a run worker (drives runs), a tool worker (runs tool calls, and a
 * step's call in process when it can: eager calls), a trigger worker (starts the runs of queue
 * jobs and schedules, through the operations), the project's services (tools that declare
 * `bootstrap`), and the queue gauges when telemetry exports metrics; it tells what happens through
 * typed events ({@link WorkerEvents}), and drains all of it on {@link DirigentWorker.close}.
 *
 * `dirigent worker` and `workers/worker.ts` are this class behind a command line and an
 * environment (`serve-worker.ts`); a program embeds it as it is:
 *
 * ```ts
 * import { DirigentWorker } from 'dirigent/distributed';
 *
 * const worker = new DirigentWorker({ redis: 'redis://127.0.0.1:6379', project: '/srv/project' });
 * worker.events.on('run:ended', ({ runId, status }) => console.log(runId, status));
 * await worker.start();
 * // …
 * await worker.close(); // drains: tool jobs finish, runs are handed back to the queue
 * ```
 */
import type { Worker } from 'bullmq';
import type { RedisClient } from '../redis/redis-client.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { Dirigent } from '../operations/dirigent.js';
import { observeQueues } from '../redis/queue-gauges.js';
import { connectRedis, pingRedis, printableRedisUrl } from '../redis/redis-connection.js';
import { redisUnavailable } from '../errors/deployment-errors.js';
import {
  RunWorker,
  type RunEventSink,
  type RunWorkerEvents,
} from '../redis/run-worker/run-worker.js';
import {
  ToolWorker,
  type ToolEventSink,
  type ToolWorkerEvents,
} from '../redis/tool-worker/tool-worker.js';
import { TriggerWorker } from '../redis/triggers/trigger-worker.js';
import { agreeOnShardCount } from '../redis/shards/shard-count.js';
import { BootstrapRunner } from '../services/bootstrap-runner.js';
import {
  WorkerEventEmitter,
  type WorkerErrorEvent,
  type WorkerEventSource,
} from './worker-events.js';
import {
  compileWorkerOptions,
  type CompiledWorkerOptions,
  type DirigentWorkerOptions,
  type WorkerQueue,
} from './worker-options.js';

/** How long {@link DirigentWorker.start} waits for Redis to answer before `REDIS_UNAVAILABLE`. */
const PING_TIMEOUT_MS = 3000;

/** What a started worker is made of: each part only for the queues it serves. */
interface Parts {
  redis: RedisClient;
  /** A run worker per shard served, in the order of `shardsServed`. */
  runs: RunWorker[];
  /** A tool worker per shard served, likewise. */
  tools: ToolWorker[];
  /** The operations the trigger worker starts runs with. */
  operations?: Dirigent;
  triggers?: TriggerWorker;
  services?: BootstrapRunner;
  gauges?: { close(): Promise<void> };
}

/** A worker serving a deployment from this process (see the module comment). */
export class DirigentWorker {
  /** The options, defaults filled in, as the worker uses them. */
  readonly options: CompiledWorkerOptions;
  private readonly emitter: WorkerEventEmitter;
  private parts: Parts | undefined;
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  /**
   * A worker made with `options`, not started yet: subscribe to its {@link events}, then
   * {@link start} it. Throws `NEEDS_REDIS`, `INVALID_REQUEST`, `FILE_NOT_FOUND` or
   * `NOT_A_DIRECTORY` for options it cannot serve with (see `compileWorkerOptions`).
   */
  constructor(options: DirigentWorkerOptions = {}) {
    this.options = compileWorkerOptions(options);
    const log = this.options.logger;
    this.emitter = new WorkerEventEmitter(({ source, error }) =>
      log.error(
        { source, error_code: error.code },
        `dirigent worker (${source}): ${error.message}`,
      ),
    );
  }

  /** A worker made with `options` and started: see the constructor and {@link start}. */
  static async start(options: DirigentWorkerOptions = {}): Promise<DirigentWorker> {
    const worker = new DirigentWorker(options);
    await worker.start();
    return worker;
  }

  /** Where to subscribe to what happens: see {@link WorkerEvents}. */
  get events(): WorkerEventSource {
    return this.emitter;
  }

  /**
   * The names of this worker's parts in the deployment (their lease names): `runs` is the
   * `worker` of its run events and the owner its runs show, `tools` of its tool events. Known
   * once started, for the queues it serves; on a deployment with shards, each shard served has
   * parts of its own, and these are those of the first shard served.
   */
  get names(): { runs?: string; tools?: string } {
    const runs = this.parts?.runs[0];
    const tools = this.parts?.tools[0];
    return { ...(runs && { runs: runs.name }), ...(tools && { tools: tools.name }) };
  }

  /**
   * Connects and serves; resolves once every queue served is taken from (`worker:ready`). The
   * project's services start then, in the background. `REDIS_UNAVAILABLE` when Redis does not
   * answer; nothing is left open then. Called again, it resolves with the first call; called
   * after {@link close}, it is refused (`INVALID_REQUEST`: a closed worker does not start again).
   */
  start(): Promise<void> {
    if (this.closing !== undefined && this.starting === undefined)
      return Promise.reject(
        DirigentError.fatal(
          ErrorCode.INVALID_REQUEST,
          'This worker was closed before it started.',
          {
            hint: 'Make a new DirigentWorker to serve again.',
          },
        ),
      );
    this.starting ??= this.open();
    return this.starting;
  }

  /**
   * Drains and closes, once (called again, it resolves with the first call): it takes no more jobs
   * (`worker:draining`); the services stop; the tool calls under way finish and their outcomes go
   * out; the runs it drives are handed back to the queue, for another worker (or the next one
   * this process makes) to resume; the trigger worker stops; then its connections close
   * (`worker:closed`). A worker that never started, or failed to, closes at once.
   */
  close(): Promise<void> {
    this.closing ??= this.drain();
    return this.closing;
  }

  private async open(): Promise<void> {
    const o = this.options;
    if (!(await pingRedis(o.redisUrl, PING_TIMEOUT_MS)))
      throw redisUnavailable(printableRedisUrl(o.redisUrl), 'worker');
    const parts: Parts = { redis: connectRedis(o.redisUrl), runs: [], tools: [] };
    this.parts = parts;
    try {
      await agreeOnShardCount(parts.redis, o.layout);
      await this.make(parts);
    } catch (err) {
      // Whatever was made is closed again: a worker that did not start holds nothing.
      await this.closeParts(parts);
      this.parts = undefined;
      throw DirigentError.from(err);
    }
    this.emitter.emit('worker:ready', {
      queues: [...o.queues],
      prefix: o.prefix,
      shards: { count: o.layout.count, served: [...o.shardsServed] },
      projectDir: o.projectDir,
      names: this.names,
      concurrency: { tools: o.toolConcurrency, runs: o.runConcurrency },
    });
    // Services run beside the jobs, on workers that run tools; never before serving them.
    if (o.services) {
      parts.services = new BootstrapRunner({
        redis: parts.redis,
        prefix: o.layout.home,
        projectDir: o.projectDir,
        logger: o.logger,
        leaseMs: o.timing.lockMs,
        ...(o.telemetry && { telemetry: o.telemetry }),
      });
      parts.services.start();
    }
  }

  /**
   * Makes the parts of the queues served, for each shard served, and resolves once their BullMQ
   * workers take jobs. A worker's concurrency is shared out among the shards it serves (at least
   * one run and one call each), so that each shard gets the same share of its intake.
   */
  private async make(parts: Parts): Promise<void> {
    const o = this.options;
    const serves = (queue: WorkerQueue) => o.queues.includes(queue);
    const share = (n: number) => Math.max(1, Math.ceil(n / o.shardsServed.length));
    const runEvents: RunEventSink = (name, event) =>
      this.emitter.emit<keyof RunWorkerEvents>(name, event);
    const toolEvents: ToolEventSink = (name, event) =>
      this.emitter.emit<keyof ToolWorkerEvents>(name, event);
    for (const shard of o.shardsServed) {
      const shared = {
        redis: parts.redis,
        prefix: o.layout.prefixes[shard]!,
        layout: o.layout,
        projectDir: o.projectDir,
        logger: o.logger,
        leaseMs: o.leaseMs,
        timing: o.timing,
        ...(o.telemetry && { telemetry: o.telemetry }),
      };
      const tools = serves('tools')
        ? new ToolWorker({
            ...shared,
            concurrency: share(o.toolConcurrency),
            slotWaitMs: o.slotWaitMs,
            events: toolEvents,
          })
        : undefined;
      if (tools) parts.tools.push(tools);
      // A worker on both queues runs a step's call itself when it can (eager calls).
      if (serves('runs'))
        parts.runs.push(
          new RunWorker({
            ...shared,
            concurrency: share(o.runConcurrency),
            ...(o.replicaWait && { replicaWait: o.replicaWait }),
            events: runEvents,
            ...(tools && { tools }),
          }),
        );
    }
    if (serves('triggers')) {
      // Trigger jobs start runs through the operations, as the CLI and the API do.
      parts.operations = await Dirigent.open({
        project: o.projectDir,
        redis: o.redisUrl,
        prefix: o.prefix,
        shards: o.layout.count,
        ...(o.telemetry && { telemetry: o.telemetry }),
      });
      parts.triggers = new TriggerWorker(parts.operations, parts.redis, o.layout.home);
      void parts.triggers.syncSchedules(o.logger);
    }
    const metrics = o.telemetry?.metrics;
    if (metrics) parts.gauges = observeQueues(metrics.meter, parts.redis, o.layout);
    const bull: [WorkerQueue, Worker | undefined][] = [
      ...parts.runs.map((r): [WorkerQueue, Worker] => ['runs', r.worker]),
      ...parts.tools.map((t): [WorkerQueue, Worker] => ['tools', t.worker]),
      ['triggers', parts.triggers?.worker],
    ];
    for (const [source, worker] of bull)
      worker?.on('error', (err: Error) => this.failed(source, err));
    await Promise.all(bull.map(([, worker]) => worker?.waitUntilReady()));
  }

  private async drain(): Promise<void> {
    // A worker still starting finishes starting first; one that failed to start holds nothing.
    const started = await this.starting?.then(
      () => true,
      () => false,
    );
    const parts = this.parts;
    if (!started || parts === undefined) return;
    const driving = parts.runs.reduce((n, r) => n + r.drivingCount, 0);
    this.emitter.emit('worker:draining', { runs: driving });
    await this.closeParts(parts);
    this.emitter.emit('worker:closed', {});
  }

  /** Closes `parts`: services, tool calls, runs and triggers at once, then the connections. */
  private async closeParts(parts: Parts): Promise<void> {
    const outcomes = await Promise.allSettled([
      parts.services?.stop(),
      ...parts.tools.map((t) => t.close()),
      ...parts.runs.map((r) => r.close()),
      parts.triggers?.close(),
    ]);
    outcomes.push(
      ...(await Promise.allSettled([parts.operations?.close(), parts.gauges?.close()])),
    );
    for (const outcome of outcomes)
      if (outcome.status === 'rejected') this.failed('close', outcome.reason);
    parts.redis.disconnect();
  }

  private failed(source: WorkerErrorEvent['source'], err: unknown): void {
    this.emitter.emit('error', { source, error: DirigentError.from(err) });
  }
}
