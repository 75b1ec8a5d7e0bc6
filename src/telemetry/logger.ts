/**
 * Log lines of the worker (and of any long-running Dirigent process): structured JSON on stderr,
 * one object a line, carrying `run_id`, `trace_id` and `span_id` where a run or a span is at hand,
 * so a log search and a trace join up; human-readable in a terminal. Built on pino.
 *
 * `DIRIGENT_LOG_LEVEL` (trace, debug, info, warn, error; default info) and `DIRIGENT_LOG_FORMAT`
 * (`json` or `pretty`; default pretty in a terminal, json otherwise).
 */
import { pino } from 'pino';
import pretty from 'pino-pretty';
import type { Span } from '@opentelemetry/api';
import type { RunTrace } from './run-trace.js';

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

/** The process's logger, as the environment configures it (see the module comment). */
export function createLogger(
  env: Record<string, string | undefined> = process.env,
  stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
): Logger {
  const level = env.DIRIGENT_LOG_LEVEL?.trim() || 'info';
  const format = env.DIRIGENT_LOG_FORMAT?.trim() || (stream.isTTY ? 'pretty' : 'json');
  const options = { level, base: { pid: process.pid }, messageKey: 'msg' };
  if (format === 'pretty')
    return pino(
      options,
      pretty({
        destination: stream,
        sync: true,
        colorize: stream.isTTY === true,
        ignore: 'pid,hostname',
      }),
    );
  return pino(
    options,
    stream === process.stderr ? pino.destination({ dest: 2, sync: true }) : stream,
  );
}

/** The fields that tie a log line to a run and its trace: `run_id`, `trace_id`, `span_id`. */
export function traceFields(
  runId: string | undefined,
  at: Span | RunTrace | undefined,
): Record<string, string> {
  const fields: Record<string, string> = {};
  if (runId !== undefined) fields.run_id = runId;
  if (at === undefined) return fields;
  const c = 'spanContext' in at ? at.spanContext() : at;
  fields.trace_id = c.traceId;
  fields.span_id = c.spanId;
  return fields;
}
