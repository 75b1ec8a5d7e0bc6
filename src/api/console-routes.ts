/**
 * The web console (built from `web/` into `dist/console/` by `npm run build`): its page at `/`,
 * `/runs/<runId>`, `/directives` and `/directives/<item id>` (one page; the browser draws each),
 * its scripts and styles under `/console/`, and `GET /v1/info`, what the console asks the server
 * first. The page and its files are public: they hold no data, and every piece of data they show
 * comes from the API with the token the person signed in with (or a header a proxy adds). The
 * page's Content-Security-Policy allows scripts, styles and requests from this server alone, so
 * nothing a run holds can ever run as code in it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { DIRIGENT_VERSION, PACKAGE_ROOT } from '../package-info.js';
import type { ApiContext } from './api-context.js';
import { errorResponses } from './api-schemas.js';
import { PUBLIC } from './health-routes.js';

/** Where `npm run build` puts the console. */
export const CONSOLE_DIR = join(PACKAGE_ROOT, 'dist', 'console');

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
} as const;

/** What the console is served with. */
export interface ConsoleOptions {
  /** A link to a trace in the tracing dashboard, `{traceId}` standing for the trace's id. */
  traceUrl?: string;
  /** Where the built console is (default {@link CONSOLE_DIR}). */
  dir?: string;
}

/** Registers the console's page, files and `/v1/info` on `app`. */
export async function consoleRoutes(
  app: FastifyInstance,
  ctx: ApiContext,
  options: ConsoleOptions = {},
): Promise<void> {
  const dir = options.dir ?? CONSOLE_DIR;
  const indexFile = join(dir, 'index.html');
  const page = existsSync(indexFile) ? readFileSync(indexFile, 'utf8') : undefined;

  app.get(
    '/v1/info',
    {
      schema: {
        operationId: 'info',
        tags: ['probes'],
        summary: 'What this server is: where runs run, its version, its tracing dashboard',
        response: {
          200: {
            type: 'object',
            required: ['mode', 'version', 'traceUrl'],
            properties: {
              mode: { type: 'string', enum: ['embedded', 'redis'] },
              version: { type: 'string' },
              traceUrl: {
                type: ['string', 'null'],
                description: 'A link to a trace, `{traceId}` standing for its id.',
              },
            },
            additionalProperties: false,
          },
          ...errorResponses(),
        },
      },
    },
    () => ({
      mode: ctx.dirigent.mode,
      version: DIRIGENT_VERSION,
      traceUrl: options.traceUrl ?? null,
    }),
  );

  const servePage = (_request: unknown, reply: FastifyReply) => {
    if (page === undefined)
      throw DirigentError.fatal(ErrorCode.NOT_FOUND, `The console is not built (${indexFile}).`, {
        hint: 'Build it with `npm run build` in the Dirigent package.',
      });
    return reply
      .headers({ ...SECURITY_HEADERS, 'cache-control': 'no-cache' })
      .type('text/html; charset=utf-8')
      .send(page);
  };
  const route = { config: PUBLIC, schema: { hide: true } };
  for (const path of ['/', '/runs/:runId', '/directives', '/directives/*'])
    app.get(path, route, servePage);

  if (page !== undefined)
    await app.register(async (scope) => {
      scope.addHook('onRoute', (opts) => {
        opts.config = { ...opts.config, ...PUBLIC };
        opts.schema = { ...opts.schema, hide: true };
      });
      scope.addHook('onSend', async (_request, reply) => {
        void reply.headers(SECURITY_HEADERS);
      });
      await scope.register(fastifyStatic, {
        root: dir,
        prefix: '/console/',
        index: false,
        decorateReply: false,
        cacheControl: true,
        maxAge: 0,
      });
    });
}

/**
 * Checks a trace link template (`DIRIGENT_TRACE_URL`): an http(s) URL holding `{traceId}`;
 * `INVALID_CONFIG` otherwise.
 */
export function checkTraceUrl(template: string): string {
  let url: URL | undefined;
  try {
    url = new URL(template.replace('{traceId}', '0'));
  } catch {
    url = undefined;
  }
  if (url !== undefined && /^https?:$/.test(url.protocol) && template.includes('{traceId}'))
    return template;
  throw DirigentError.fatal(
    ErrorCode.INVALID_CONFIG,
    `DIRIGENT_TRACE_URL must be an http(s) URL holding {traceId}, not "${template.slice(0, 200)}".`,
    { hint: 'For Jaeger: DIRIGENT_TRACE_URL=http://localhost:16686/trace/{traceId}' },
  );
}
