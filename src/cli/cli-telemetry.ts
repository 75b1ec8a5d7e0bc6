/**
 * The CLI's telemetry: started before any command runs (`main.ts`), handed to the engines,
 * workers and clients the commands make, and flushed before the process exits, whatever the
 * command's outcome (a finished run, Ctrl-C, a worker's SIGTERM).
 */
import {
  startTelemetry,
  type PrometheusEndpoint,
  type StartedTelemetry,
} from '../telemetry/start-telemetry.js';
import { Telemetry } from '../telemetry/telemetry.js';

let started: StartedTelemetry | undefined;
let telemetry: Telemetry | undefined;

/** Starts the SDK as the `OTEL_*` variables (and a worker's `--metrics-port`) ask. */
export async function startCliTelemetry(prometheus?: PrometheusEndpoint): Promise<void> {
  started = await startTelemetry(prometheus ? { prometheus } : {});
  telemetry = Telemetry.of(started.options);
}

/**
 * The Prometheus endpoint a port and host ask for (`--metrics-port`, `DIRIGENT_METRICS_PORT`);
 * undefined without a port. A port that is not one ends the process with status 2, naming
 * `option`.
 */
export function metricsEndpoint(
  port: string | undefined,
  host: string | undefined,
  option: string,
): PrometheusEndpoint | undefined {
  if (port === undefined || port === '') return undefined;
  const n = Number(port);
  if (!(Number.isInteger(n) && n > 0 && n < 65536)) {
    process.stderr.write(`${option} takes a port number from 1 to 65535 (got ${port}).\n`);
    process.exit(2);
  }
  return { port: n, host: host || '127.0.0.1' };
}

/**
 * What the commands hand to engines, workers and clients (one for all, so its instruments are
 * made once); undefined when telemetry is off.
 */
export function cliTelemetry(): Telemetry | undefined {
  return telemetry;
}

/** Flushes what telemetry holds, then exits with `code`. */
export async function exitCli(code: number): Promise<never> {
  await started?.shutdown();
  process.exit(code);
}
