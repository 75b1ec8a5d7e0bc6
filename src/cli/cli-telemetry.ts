/**
 * The process telemetry under the names the CLI gave it before it moved to
 * `telemetry/process-telemetry.ts` (where the CLI and worker processes both take it from). Kept
 * for code that still imports these names.
 */
export {
  exitProcess as exitCli,
  processTelemetry as cliTelemetry,
  startProcessTelemetry as startCliTelemetry,
} from '../telemetry/process-telemetry.js';
