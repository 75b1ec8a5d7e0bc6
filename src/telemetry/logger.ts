/**
 * What Dirigent's workers log through, and the fields that tie a log line to a run and its trace
 * (the logger itself, on pino, is made by create-logger.ts).
 */
import type { Span } from '@opentelemetry/api';

/** What Dirigent's workers log through: pino's shape, so a pino logger can be passed as it is. */
export interface Logger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** A logger that drops everything (the default of the library's workers). */
export const SILENT_LOGGER: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

/** The ids of a span (a run's trace, a span recorded elsewhere). */
export interface SpanIds {
  traceId: string;
  spanId: string;
}

/** The fields that tie a log line to a run and its trace: `run_id`, `trace_id`, `span_id`. */
export function traceFields(
  runId: string | undefined,
  at: Span | SpanIds | undefined,
): Record<string, string> {
  const fields: Record<string, string> = {};
  if (runId !== undefined) fields.run_id = runId;
  if (at === undefined) return fields;
  const c = 'spanContext' in at ? at.spanContext() : at;
  fields.trace_id = c.traceId;
  fields.span_id = c.spanId;
  return fields;
}
