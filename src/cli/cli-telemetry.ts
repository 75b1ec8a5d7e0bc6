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
import type { TelemetryOptions } from '../telemetry/telemetry.js';

let started: StartedTelemetry | undefined;

/** Starts the SDK as the `OTEL_*` variables (and a worker's `--metrics-port`) ask. */
export async function startCliTelemetry(prometheus?: PrometheusEndpoint): Promise<void> {
  started = await startTelemetry(prometheus ? { prometheus } : {});
}

/** What the commands hand to engines, workers and clients; undefined when telemetry is off. */
export function cliTelemetry(): TelemetryOptions | undefined {
  return started?.options;
}

/** Flushes what telemetry holds, then exits with `code`. */
export async function exitCli(code: number): Promise<never> {
  await started?.shutdown();
  process.exit(code);
}
