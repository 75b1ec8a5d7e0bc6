import { connectRedis, pingRedis, redisDownMessage, redisUrl } from '../queue/redis-connection.js';
import { DEFAULT_PREFIX } from '../queue/queue-names.js';
import { RunWorker } from '../queue/run-worker.js';
import { ToolWorker } from '../queue/tool-worker.js';

/** Options of `dirigent worker`. */
export interface WorkerOptions {
  redis?: string;
  prefix?: string;
  concurrency?: string;
  queues: string;
}

/**
 * `dirigent worker [--concurrency N] [--queues runs,tools]`: serves run jobs and tool jobs until
 * SIGTERM or SIGINT, then finishes the tool jobs under way, hands its runs back to the queue and
 * exits 0. Any number of workers, on any number of machines, share one Redis.
 */
export async function workerCommand(opts: WorkerOptions): Promise<number> {
  const url = redisUrl(opts.redis);
  if (url === undefined) {
    process.stderr.write('dirigent worker needs Redis: pass --redis <url> or set REDIS_URL.\n');
    return 2;
  }
  const queues = new Set(opts.queues.split(',').map((q) => q.trim()));
  const unknown = [...queues].filter((q) => q !== 'runs' && q !== 'tools');
  if (unknown.length > 0 || queues.size === 0) {
    process.stderr.write(`--queues takes runs, tools or both (got ${opts.queues}).\n`);
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
  const tools = queues.has('tools')
    ? new ToolWorker({ redis, prefix, ...(concurrency && { concurrency }) })
    : undefined;
  const runs = queues.has('runs') ? new RunWorker({ redis, prefix }) : undefined;
  process.stderr.write(
    `dirigent worker ${process.pid}: ${[...queues].join(' and ')} jobs from ${prefix} (${
      concurrency ?? 'default'
    } concurrency)\n`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  process.stderr.write(`dirigent worker ${process.pid}: draining\n`);
  await Promise.all([tools?.close(), runs?.close()]);
  redis.disconnect();
  return 0;
}
