/**
 * `dirigent serve`: the HTTP API (src/api) and the web console at `/` on the operations, embedded
 * or on a Redis deployment (`--redis` / `REDIS_URL`); `DIRIGENT_TRACE_URL` links the console's
 * trace ids to a tracing dashboard. Until SIGTERM or SIGINT; then it stops taking requests, ends event
 * streams, answers the requests under way, closes the operations and exits 0.
 */
import type { FastifyBaseLogger } from 'fastify';
import { buildApi, DEFAULT_RATE_LIMIT } from '../api/build-api.js';
import { checkTraceUrl } from '../api/console-routes.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { Dirigent } from '../operations/dirigent.js';
import { redisUrl } from '../redis/redis-url.js';
import { createLogger } from '../telemetry/create-logger.js';
import { apiTokensOption } from './api-tokens-option.js';
import { processTelemetry } from '../telemetry/process-telemetry.js';

/** Options of `dirigent serve`. */
export interface ServeOptions {
  port: string;
  host: string;
  project: string;
  redis?: string;
  prefix?: string;
  /** False with `--no-auth`. */
  auth: boolean;
  tokensFile?: string;
  rateLimit?: string;
  bodyLimit?: string;
  /** Let clients run tools directly, copy and sign items (`/v1/items`, `/mcp`). */
  fullAccess?: boolean;
}

const say = (line: string) => process.stderr.write(`${line}\n`);

/** See the module comment. Exit 2 for bad options or no token, 1 when it cannot start. */
export async function serveCommand(opts: ServeOptions): Promise<number> {
  const port = whole(opts.port, '--port', 0, 65535);
  const rateLimit =
    opts.rateLimit === undefined ? DEFAULT_RATE_LIMIT : whole(opts.rateLimit, '--rate-limit', 0);
  const bodyLimit =
    opts.bodyLimit === undefined ? undefined : whole(opts.bodyLimit, '--body-limit', 1);
  if (port === undefined || rateLimit === undefined || (opts.bodyLimit && bodyLimit === undefined))
    return 2;

  const tokens = apiTokensOption('serve', opts);
  if (tokens === undefined) return 2;

  let traceUrl: string | undefined;
  try {
    const template = process.env.DIRIGENT_TRACE_URL;
    if (template) traceUrl = checkTraceUrl(template);
  } catch (err) {
    say(DirigentError.from(err).describe());
    return 2;
  }

  let dirigent: Dirigent;
  try {
    const url = redisUrl(opts.redis);
    const telemetry = processTelemetry();
    dirigent = await Dirigent.open({
      project: opts.project,
      ...(url !== undefined && { redis: url }),
      ...(opts.prefix !== undefined && { prefix: opts.prefix }),
      ...(telemetry && { telemetry }),
    });
  } catch (err) {
    const e = DirigentError.from(err);
    say(e.describe());
    return e.code === ErrorCode.REDIS_UNAVAILABLE || e.code === ErrorCode.INTERNAL ? 1 : 2;
  }

  const logger = createLogger() as unknown as FastifyBaseLogger;
  const app = await buildApi(dirigent, {
    tokens,
    rateLimit,
    ...(bodyLimit !== undefined && { bodyLimit }),
    fullAccess: opts.fullAccess === true,
    logger,
    ...(traceUrl !== undefined && { console: { traceUrl } }),
  });
  let address: string;
  try {
    address = await app.listen({ port, host: opts.host });
  } catch (err) {
    say(`dirigent serve cannot listen on ${opts.host}:${port}: ${(err as Error).message}`);
    await app.close();
    await dirigent.close();
    return 1;
  }
  const where = dirigent.mode === 'redis' ? 'runs on Redis workers' : 'runs embedded';
  say(
    `dirigent serve ${process.pid}: listening on ${address} (${where}, project ${dirigent.projectDir}, ${tokens === false ? 'no authentication' : `${tokens.length} token${tokens.length === 1 ? '' : 's'}`}${opts.fullAccess === true ? ', full access' : ''})`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  say(`dirigent serve ${process.pid}: closing`);
  await app.close();
  await dirigent.close({ graceMs: SHUTDOWN_GRACE_MS });
  return 0;
}

/** How long a shutdown lets embedded runs under way end before it cancels them. */
const SHUTDOWN_GRACE_MS = 10_000;

/** `text` as a whole number from `min` to `max`; undefined (with a message on stderr) otherwise. */
export function whole(
  text: string,
  option: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  const n = Number(text);
  if (/^\d+$/.test(text) && n >= min && n <= max) return n;
  say(
    `${option} takes a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${max}`} (got ${text}).`,
  );
  return undefined;
}
