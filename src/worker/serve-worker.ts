/**
 * A worker process: a {@link DirigentWorker} that serves until the process is told to stop
 * (SIGTERM, SIGINT), then drains, logging its life on the way. What `dirigent worker` and
 * `workers/worker.ts` (the container's entry point) both run, each giving the options it read
 * (flags, or the environment alone).
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { PrometheusEndpoint } from '../telemetry/start-telemetry.js';
import { DirigentWorker } from './dirigent-worker.js';
import type { DirigentWorkerOptions } from './worker-options.js';

/** How a worker process runs, beside its worker's options. */
export interface ServeWorkerOptions {
  /** The signals that make it drain and stop (default SIGTERM and SIGINT). */
  signals?: readonly NodeJS.Signals[];
  /** Where its metrics are served, when they are, for its start line to say. */
  metrics?: PrometheusEndpoint;
}

/**
 * Starts a worker with `options`, serves until one of the `signals`, then drains (the tool calls
 * under way finish, the runs it drives go back to the queue) and resolves with the process's exit
 * status: 0 once drained, 1 when Redis does not answer (or something failed that is not the
 * options' fault), 2 when the options are wrong. Why it could not start is said on standard error.
 */
export async function serveWorker(
  options: DirigentWorkerOptions,
  how: ServeWorkerOptions = {},
): Promise<number> {
  let worker: DirigentWorker;
  try {
    worker = new DirigentWorker(options);
  } catch (err) {
    return cannotStart(err);
  }
  const { logger: log, queues, prefix, projectDir, toolConcurrency } = worker.options;
  const pid = process.pid;
  // The start line: whoever waits for a worker to serve waits for "jobs from" on standard error.
  worker.events.on('worker:ready', ({ shards }) =>
    log.info(
      { prefix, project: projectDir, queues, concurrency: toolConcurrency, shards },
      `dirigent worker ${pid}: ${queues.join(', ')} jobs from ${prefix}${shardsText(shards)} for project ${projectDir} (${toolConcurrency} concurrency)${
        how.metrics
          ? `; metrics on http://${how.metrics.host ?? '127.0.0.1'}:${how.metrics.port}/metrics`
          : ''
      }`,
    ),
  );
  worker.events.on('worker:draining', ({ runs }) =>
    log.info({ runs }, `dirigent worker ${pid}: draining`),
  );
  worker.events.on('error', ({ source, error }) =>
    log.error(
      { source, error_code: error.code },
      `dirigent worker ${pid} (${source}): ${error.message}`,
    ),
  );
  // Listening before it starts: a signal while it connects drains it as soon as it serves.
  const signals = how.signals ?? ['SIGTERM', 'SIGINT'];
  let stopped: () => void = () => undefined;
  const stop = new Promise<void>((resolve) => (stopped = resolve));
  for (const signal of signals) process.once(signal, stopped);
  try {
    await worker.start();
    await stop;
    await worker.close();
    return 0;
  } catch (err) {
    return cannotStart(err);
  } finally {
    for (const signal of signals) process.off(signal, stopped);
  }
}

/** Says why the worker could not start; its exit status (2 for the options' fault, else 1). */
function cannotStart(err: unknown): number {
  const e = DirigentError.from(err);
  process.stderr.write(`${e.describe()}\n`);
  return e.code === ErrorCode.REDIS_UNAVAILABLE || e.code === ErrorCode.INTERNAL ? 1 : 2;
}

/** The shards a worker serves, for its start line: nothing for a deployment of one shard. */
function shardsText({ count, served }: { count: number; served: number[] }): string {
  if (count === 1) return '';
  return served.length === count
    ? ` (all ${count} shards)`
    : ` (shards ${served.join(', ')} of ${count})`;
}
