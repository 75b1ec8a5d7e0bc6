import { Dirigent } from '../operations/dirigent.js';
import { TriggerWorker } from '../redis/triggers/trigger-worker.js';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { BootstrapRunner } from '../services/bootstrap-runner.js';
import { connectRedis, pingRedis, redisDownMessage, redisUrl } from '../redis/redis-connection.js';
import { DEFAULT_PREFIX } from '../redis/queue-names.js';
import { RunWorker } from '../redis/run-worker/run-worker.js';
import { ToolWorker } from '../redis/tool-worker/tool-worker.js';
import { createLogger } from '../telemetry/create-logger.js';
import { observeQueues } from '../redis/queue-gauges.js';
import { cliTelemetry } from './cli-telemetry.js';

/** The queues a worker can serve. */
const QUEUES = ['runs', 'tools', 'triggers'];

/** Options of `dirigent worker`. */
export interface WorkerOptions {
  redis?: string;
  prefix?: string;
  concurrency?: string;
  queues: string;
  /** The project served (default: `$DIRIGENT_PROJECT`, else the current folder). */
  project?: string;
  /** Serve Prometheus metrics on this port (started with the CLI's telemetry: see main.ts). */
  metricsPort?: string;
  metricsHost?: string;
}

/**
 * `dirigent worker [--concurrency N] [--queues runs,tools]`: serves run jobs and tool jobs until
 * SIGTERM or SIGINT, then finishes the tool jobs under way, hands its runs back to the queue and
 * exits 0. Any number of workers, on any number of machines, share one Redis.
 *
 * A worker that serves tool jobs also starts the project's bootstrap tools, beside serving jobs
 * (`services/bootstrap-runner.ts`), and stops them when it drains.
 */
export async function workerCommand(opts: WorkerOptions): Promise<number> {
  const url = redisUrl(opts.redis);
  if (url === undefined) {
    process.stderr.write('dirigent worker needs Redis: pass --redis <url> or set REDIS_URL.\n');
    return 2;
  }
  const queues = new Set(opts.queues.split(',').map((q) => q.trim()));
  const unknown = [...queues].filter((q) => !QUEUES.includes(q));
  if (unknown.length > 0 || queues.size === 0) {
    process.stderr.write(
      `--queues takes one or more of ${QUEUES.join(', ')} (got ${opts.queues}).\n`,
    );
    return 2;
  }
  const concurrency = opts.concurrency === undefined ? undefined : Number(opts.concurrency);
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1)) {
    process.stderr.write(
      `--concurrency takes a whole number of at least 1 (got ${opts.concurrency}).\n`,
    );
    return 2;
  }
  if (!(await pingRedis(url, 3000))) {
    process.stderr.write(`${redisDownMessage(url)}\n`);
    return 1;
  }
  const prefix = opts.prefix ?? (process.env.DIRIGENT_PREFIX || DEFAULT_PREFIX);
  const redis = connectRedis(url);
  const logger = createLogger();
  const telemetry = cliTelemetry();
  const projectDir = resolve(opts.project ?? (process.env.DIRIGENT_PROJECT || process.cwd()));
  if (!existsSync(projectDir)) {
    process.stderr.write(
      `The project folder ${projectDir} does not exist (--project, DIRIGENT_PROJECT).\n`,
    );
    redis.disconnect();
    return 2;
  }
  const shared = { redis, prefix, logger, projectDir, ...(telemetry && { telemetry }) };
  const tools = queues.has('tools')
    ? new ToolWorker({ ...shared, ...(concurrency && { concurrency }) })
    : undefined;
  // A worker on both queues runs a step's call itself when it can (eager calls).
  const runs = queues.has('runs')
    ? new RunWorker({ ...shared, ...(tools && { tools }) })
    : undefined;
  // Trigger jobs start runs through the operations, as the CLI and the API do.
  const operations = queues.has('triggers')
    ? await Dirigent.open({
        project: projectDir,
        redis: url,
        prefix,
        ...(telemetry && { telemetry }),
      })
    : undefined;
  const triggers = operations && new TriggerWorker(operations, redis, prefix);
  void triggers?.syncSchedules(logger);
  const gauges = telemetry?.metrics && observeQueues(telemetry.metrics.meter, redis, prefix);
  logger.info(
    { prefix, project: projectDir, queues: [...queues], concurrency: concurrency ?? 'default' },
    `dirigent worker ${process.pid}: ${[...queues].join(', ')} jobs from ${prefix} for project ${projectDir} (${
      concurrency ?? 'default'
    } concurrency)${opts.metricsPort ? `; metrics on http://${opts.metricsHost ?? '127.0.0.1'}:${opts.metricsPort}/metrics` : ''}`,
  );
  // Bootstrap tools run beside the jobs, on workers that run tools; never before serving them.
  const bootstrap = tools
    ? new BootstrapRunner({ redis, prefix, projectDir, logger, ...(telemetry && { telemetry }) })
    : undefined;
  bootstrap?.start();
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  logger.info({}, `dirigent worker ${process.pid}: draining`);
  await Promise.all([bootstrap?.stop(), tools?.close(), runs?.close(), triggers?.close()]);
  await operations?.close();
  await gauges?.close();
  redis.disconnect();
  return 0;
}
