/**
 * `dirigent worker`: the worker process (`worker/serve-worker.ts`) behind the command line. This
 * face only reads the flags; the worker module composes, serves and drains.
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { redisUrl } from '../redis/redis-url.js';
import { processTelemetry } from '../telemetry/process-telemetry.js';
import { serveWorker } from '../worker/serve-worker.js';
import { countFromText, queuesFromList, type WorkerQueue } from '../worker/worker-options.js';

/** Options of `dirigent worker`. */
export interface WorkerOptions {
  redis?: string;
  prefix?: string;
  /** Tool jobs at once (`--concurrency`; default 8). */
  concurrency?: string;
  /** `--queues`: a comma-separated list of runs, tools, triggers. */
  queues: string;
  /** The project served (`--project`; default `$DIRIGENT_PROJECT`, else the current folder). */
  project?: string;
  /** Serve Prometheus metrics on this port (started with the process's telemetry: see main.ts). */
  metricsPort?: string;
  metricsHost?: string;
}

/**
 * `dirigent worker [--concurrency N] [--queues runs,tools,triggers]`: serves the deployment's jobs
 * until SIGTERM or SIGINT, then finishes the tool jobs under way, hands its runs back to the queue
 * and exits 0; 1 when Redis does not answer, 2 for flags it cannot serve with. Any number of
 * workers, on any number of machines, share one Redis.
 */
export async function workerCommand(opts: WorkerOptions): Promise<number> {
  const url = redisUrl(opts.redis);
  if (url === undefined) {
    process.stderr.write('dirigent worker needs Redis: pass --redis <url> or set REDIS_URL.\n');
    return 2;
  }
  let queues: WorkerQueue[];
  let toolConcurrency: number | undefined;
  try {
    queues = queuesFromList(opts.queues, '--queues');
    if (opts.concurrency !== undefined)
      toolConcurrency = countFromText(opts.concurrency, '--concurrency');
  } catch (err) {
    process.stderr.write(`${DirigentError.from(err).describe()}\n`);
    return 2;
  }
  const telemetry = processTelemetry();
  const port = opts.metricsPort === undefined ? undefined : Number(opts.metricsPort);
  return serveWorker(
    {
      redis: url,
      queues,
      ...(opts.prefix !== undefined && { prefix: opts.prefix }),
      ...(opts.project !== undefined && { project: opts.project }),
      ...(toolConcurrency !== undefined && { toolConcurrency }),
      ...(telemetry && { telemetry }),
    },
    // main.ts checked the port when it started telemetry with it.
    port === undefined ? {} : { metrics: { port, host: opts.metricsHost ?? '127.0.0.1' } },
  );
}
