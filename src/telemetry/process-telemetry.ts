/**
 * The telemetry of a Dirigent process (the CLI, a worker process): started once before anything
 * else, handed to the engines, workers and clients the process makes, and flushed before it exits,
 * whatever the outcome (a finished run, Ctrl-C, a worker's SIGTERM). With telemetry off
 * (`start-telemetry.ts`), nothing of OpenTelemetry is loaded and {@link processTelemetry} is
 * undefined.
 */
import {
  startTelemetry,
  type PrometheusEndpoint,
  type StartedTelemetry,
} from './start-telemetry.js';
import { Telemetry } from './telemetry.js';
import { badOptionValue } from '../errors/request-errors.js';

let started: StartedTelemetry | undefined;
let telemetry: Telemetry | undefined;

/**
 * Starts the SDK as the `OTEL_*` variables (and a worker's Prometheus endpoint) ask; call it
 * once, before the process makes anything that records.
 */
export async function startProcessTelemetry(prometheus?: PrometheusEndpoint): Promise<void> {
  started = await startTelemetry(prometheus ? { prometheus } : {});
  telemetry = Telemetry.of(started.options);
}

/**
 * What the process hands to engines, workers and clients (one for all, so its instruments are
 * made once); undefined when telemetry is off or not started.
 */
export function processTelemetry(): Telemetry | undefined {
  return telemetry;
}

/** Flushes what telemetry holds (at most a few seconds), then exits the process with `code`. */
export async function exitProcess(code: number): Promise<never> {
  await started?.shutdown();
  process.exit(code);
}

/**
 * The Prometheus endpoint a port and host ask for (`--metrics-port`, `DIRIGENT_METRICS_PORT`);
 * undefined without a port. A port that is not one is `INVALID_REQUEST`, naming `option` (where
 * the value came from).
 */
export function metricsEndpoint(
  port: string | undefined,
  host: string | undefined,
  option: string,
): PrometheusEndpoint | undefined {
  if (port === undefined || port === '') return undefined;
  const n = Number(port);
  if (!(Number.isInteger(n) && n > 0 && n < 65536))
    throw badOptionValue(option, 'a port number from 1 to 65535', port);
  return { port: n, host: host || '127.0.0.1' };
}
