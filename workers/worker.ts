/**
 * A worker process for distributed runs: `node dist/workers/worker.js`, configured by the
 * environment alone (for process managers and containers): `REDIS_URL`, `DIRIGENT_PREFIX`,
 * `DIRIGENT_PROJECT`, `DIRIGENT_QUEUES` (`runs,tools,triggers` by default),
 * `DIRIGENT_CONCURRENCY`, `DIRIGENT_WORKER_LEASE_MS`, `DIRIGENT_LOCK_MS`,
 * `DIRIGENT_METRICS_PORT` and `DIRIGENT_METRICS_HOST` (Prometheus), and the `OTEL_*` variables.
 * The same as `dirigent worker` (both run `src/worker/serve-worker.ts`): telemetry starts first,
 * SIGTERM drains, then the process flushes its telemetry and exits.
 */
import { DirigentError } from '../src/errors/dirigent-error.js';
import {
  exitProcess,
  metricsEndpoint,
  processTelemetry,
  startProcessTelemetry,
} from '../src/telemetry/process-telemetry.js';
import { serveWorker } from '../src/worker/serve-worker.js';
import {
  countFromText,
  queuesFromList,
  type DirigentWorkerOptions,
} from '../src/worker/worker-options.js';

const env = process.env;
let options: DirigentWorkerOptions;
let prometheus;
try {
  prometheus = metricsEndpoint(
    env.DIRIGENT_METRICS_PORT,
    env.DIRIGENT_METRICS_HOST,
    'DIRIGENT_METRICS_PORT',
  );
  options = {
    // REDIS_URL, DIRIGENT_PREFIX, DIRIGENT_PROJECT and the timings are the worker's own defaults.
    queues: queuesFromList(env.DIRIGENT_QUEUES || 'runs,tools,triggers', 'DIRIGENT_QUEUES'),
    ...(env.DIRIGENT_CONCURRENCY && {
      toolConcurrency: countFromText(env.DIRIGENT_CONCURRENCY, 'DIRIGENT_CONCURRENCY'),
    }),
  };
} catch (err) {
  process.stderr.write(`${DirigentError.from(err).describe()}\n`);
  process.exit(2);
}
await startProcessTelemetry(prometheus);
const telemetry = processTelemetry();
await exitProcess(
  await serveWorker(
    { ...options, ...(telemetry && { telemetry }) },
    prometheus ? { metrics: prometheus } : {},
  ),
);
