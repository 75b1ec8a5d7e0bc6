/**
 * Log lines of the worker (and of any long-running Dirigent process): structured JSON on stderr,
 * one object a line, carrying `run_id`, `trace_id` and `span_id` where a run or a span is at hand
 * (logger.ts, `traceFields`), so a log search and a trace join up; human-readable in a terminal.
 * Built on pino.
 *
 * `DIRIGENT_LOG_LEVEL` (trace, debug, info, warn, error; default info) and `DIRIGENT_LOG_FORMAT`
 * (`json` or `pretty`; default pretty in a terminal, json otherwise).
 */
import { pino } from 'pino';
import pretty from 'pino-pretty';
import type { Logger } from './logger.js';

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
