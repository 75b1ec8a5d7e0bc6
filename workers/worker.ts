/**
 * A worker process for distributed runs: `node dist/workers/worker.js`, configured by the
 * environment alone (for process managers and containers): `REDIS_URL`, `DIRIGENT_PREFIX`,
 * `DIRIGENT_QUEUES` (`runs,tools,triggers` by default), `DIRIGENT_CONCURRENCY`,
 * `DIRIGENT_WORKER_LEASE_MS`, `DIRIGENT_LOCK_MS`,
 * `DIRIGENT_METRICS_PORT` and `DIRIGENT_METRICS_HOST` (Prometheus), and the `OTEL_*` variables.
 * Same behaviour as `dirigent worker`: telemetry starts first, SIGTERM drains, then the process
 * flushes its telemetry and exits.
 */
import { exitCli, metricsEndpoint, startCliTelemetry } from '../src/cli/cli-telemetry.js';
import { workerCommand } from '../src/cli/worker-command.js';

const env = process.env;
const prometheus = metricsEndpoint(
  env.DIRIGENT_METRICS_PORT,
  env.DIRIGENT_METRICS_HOST,
  'DIRIGENT_METRICS_PORT',
);
await startCliTelemetry(prometheus);
await exitCli(
  await workerCommand({
    queues: env.DIRIGENT_QUEUES || 'runs,tools,triggers',
    ...(env.DIRIGENT_CONCURRENCY !== undefined && { concurrency: env.DIRIGENT_CONCURRENCY }),
    ...(prometheus && { metricsPort: String(prometheus.port), metricsHost: prometheus.host }),
  }),
);
