/**
 * A worker process for distributed runs: `node dist/workers/worker.js`, configured by the
 * environment alone (for process managers and containers): `REDIS_URL`, `DIRIGENT_PREFIX`,
 * `DIRIGENT_QUEUES` (`runs,tools` by default), `DIRIGENT_CONCURRENCY`, `DIRIGENT_LOCK_MS`.
 * Same behaviour as `dirigent worker`: SIGTERM drains, then the process exits.
 */
import { workerCommand } from '../src/cli/worker-command.js';

const env = process.env;
process.exitCode = await workerCommand({
  queues: env.DIRIGENT_QUEUES || 'runs,tools',
  ...(env.DIRIGENT_CONCURRENCY !== undefined && { concurrency: env.DIRIGENT_CONCURRENCY }),
});
