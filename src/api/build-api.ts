/**
 * The HTTP API: a Fastify server whose routes are a face on the operations (`Dirigent`): each
 * translates a request into one operation and its result, or its `DirigentError`, into a
 * response. Every error has one JSON shape (error-body-of.ts) and a status from one table
 * (http-status.ts). Requests are checked against their route schemas, which also make the
 * OpenAPI document served at `/openapi.json`.
 *
 * ```ts
 * const dirigent = await Dirigent.open({ project: '.' });
 * const app = await buildApi(dirigent, { tokens: ['s3cret-token'] });
 * await app.listen({ port: 8080, host: '127.0.0.1' });
 * ```
 */
import swagger from '@fastify/swagger';
import rateLimit from '@fastify/rate-limit';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
} from 'fastify';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { Dirigent } from '../operations/dirigent.js';
import type { ApiContext } from './api-context.js';
import { apiErrorOf } from './api-error-of.js';
import { SHARED_SCHEMAS } from './api-schemas.js';
import { BearerAuth } from './bearer-auth.js';
import { CONSOLE_SCHEMAS } from './console-schemas.js';
import { consoleRoutes, type ConsoleOptions } from './console-routes.js';
import { directiveRoutes } from './directive-routes.js';
import { eventRoutes } from './event-routes.js';
import { batchRoutes } from './batch-routes.js';
import { itemRoutes } from './item-routes.js';
import { errorBodyOf } from './error-body-of.js';
import { healthRoutes, PUBLIC } from './health-routes.js';
import { httpStatusOf } from './http-status.js';
import { IdleSockets } from './idle-sockets.js';
import { requestValidator } from './request-validator.js';
import { runEventsRoute } from './run-events-route.js';
import { operateRoutes } from './operate-routes.js';
import { runRoutes } from './run-routes.js';
import { runViewRoutes } from './run-view-routes.js';
import type { SseStream } from './sse-stream.js';
import { noRoute, unauthorized } from '../errors/request-errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** How many event streams are open now (ended when their run ends, client leaves, or server closes). */
    readonly openEventStreams: number;
  }
}

/** What {@link buildApi} takes besides the operations. */
export interface ApiOptions {
  /**
   * The tokens accepted as `Authorization: Bearer <token>` (at least one), or `false` to turn
   * authentication off: then anyone who reaches the port may start runs.
   */
  tokens: readonly string[] | false;
  /** Requests a minute per token (per client address without authentication); 0: no limit. Default 600. */
  rateLimit?: number;
  /** The largest body in bytes, for every route (default: the project's limits plus 64 KiB). */
  bodyLimit?: number;
  /** How often event streams send a heartbeat comment (default 15 s). */
  heartbeatMs?: number;
  /**
   * How long a close waits for requests under way before it cuts their connections (default
   * 10 s). Requests that wait for a run answer at once when the server closes.
   */
  closeGraceMs?: number;
  /** Where requests and errors are logged (default: nowhere). */
  logger?: FastifyBaseLogger;
  /**
   * Let clients run tools directly, copy items between spaces and sign them through
   * `/v1/items/*` and `/mcp` (default false: they search, load, and run directives).
   */
  fullAccess?: boolean;
  /** The web console's trace links (and where it is built): see `console-routes.ts`. */
  console?: ConsoleOptions;
}

/** The default of {@link ApiOptions.rateLimit}. */
export const DEFAULT_RATE_LIMIT = 600;
const ROOM = 64 * 1024;

/** Builds the server (see the module comment); the caller listens and closes it. */
export async function buildApi(dirigent: Dirigent, options: ApiOptions): Promise<FastifyInstance> {
  const auth = options.tokens === false ? undefined : new BearerAuth(options.tokens);
  const limits = dirigent.loader.policy.limits;
  const bodyLimits = {
    inputs: options.bodyLimit ?? limits.inputsBytes + ROOM,
    payload: options.bodyLimit ?? limits.payloadBytes + ROOM,
    source: options.bodyLimit ?? limits.directiveBytes + ROOM,
    small: options.bodyLimit ?? ROOM,
  };
  let closed!: () => void;
  const ctx: ApiContext = {
    dirigent,
    closing: new Promise<void>((resolve) => (closed = resolve)),
    streams: new Set<SseStream>(),
    bodyLimits,
    heartbeatMs: options.heartbeatMs ?? 15_000,
    fullAccess: options.fullAccess ?? false,
  };

  const app = Fastify({
    ...(options.logger && { loggerInstance: options.logger }),
    bodyLimit: Math.max(...Object.values(bodyLimits)),
    // Answered below, in the one error shape.
    return503OnClosing: false,
  });
  app.setValidatorCompiler(requestValidator());
  for (const schema of [...SHARED_SCHEMAS, ...CONSOLE_SCHEMAS]) app.addSchema(schema);
  app.removeContentTypeParser('text/plain');

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Dirigent API',
        version: '1.0.0',
        description:
          'Start, read, list, cancel and signal runs of directives, watch their progress, and list and check directives. Every error is `{"error": {"code", "message", "hint"?, "details"?}}` with a stable code.',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
      security: auth ? [{ bearerAuth: [] }] : [],
      tags: [
        { name: 'runs', description: 'Runs of directives' },
        { name: 'directives', description: "The project's directives" },
        { name: 'events', description: 'Events that start the directives subscribed to them' },
        { name: 'batches', description: 'One run of a directive per input, with one result each' },
        {
          name: 'items',
          description:
            'Search, load, execute and sign directives, tools and knowledge (the arguments of the MCP tools); also served over MCP at /mcp',
        },
        { name: 'probes', description: 'Liveness and readiness' },
      ],
    },
    // A body that may be left out (its schema takes null) is not a required one.
    transformObject: (document) =>
      optionalBodies('openapiObject' in document ? document.openapiObject : document.swaggerObject),
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
  });

  // The token a request carries, checked once: its digest keys the request's rate limit.
  const tokens = new WeakMap<FastifyRequest, string | undefined>();
  const tokenOf = (request: FastifyRequest): string | undefined => {
    if (!tokens.has(request)) tokens.set(request, auth?.check(request.headers.authorization));
    return tokens.get(request);
  };
  const max = options.rateLimit ?? DEFAULT_RATE_LIMIT;
  if (max > 0)
    await app.register(rateLimit, {
      max,
      timeWindow: 60_000,
      keyGenerator: (request) => tokenOf(request) ?? `ip:${request.ip}`,
      errorResponseBuilder: (_request, context) =>
        DirigentError.fatal(
          ErrorCode.RATE_LIMITED,
          `More than ${context.max} requests a minute; try again in ${context.after}.`,
          {
            hint: 'Wait for the time the Retry-After header gives.',
            details: { limit: context.max, retryAfterSeconds: Math.ceil(context.ttl / 1000) },
          },
        ),
    });

  let closingNow = false;
  app.addHook('onRequest', async () => {
    if (closingNow) throw shuttingDown();
  });
  // After the rate limit (route hooks of onRequest), before the body is read.
  app.addHook('preParsing', async (request, _reply, payload) => {
    if (auth && !request.routeOptions.config.public && tokenOf(request) === undefined)
      throw unauthorized(request.headers.authorization !== undefined);
    return payload;
  });

  app.setErrorHandler((err, request, reply) => {
    const e = apiErrorOf(err, request.id);
    const status = httpStatusOf(e.code);
    if (e.code === ErrorCode.INTERNAL) request.log.error({ err }, e.message);
    if (status === 401) void reply.header('www-authenticate', 'Bearer realm="dirigent"');
    return reply.code(status).send(errorBodyOf(e));
  });
  app.setNotFoundHandler((request) => {
    throw noRoute(
      `${request.method} ${request.url.split('?')[0]!}`,
      'GET /openapi.json lists the routes.',
    );
  });
  const idle = new IdleSockets(app.server);
  let grace: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    closingNow = true;
    closed();
    for (const stream of ctx.streams) {
      stream.comment('server closing');
      stream.end();
    }
    idle.destroy();
    grace = setTimeout(() => app.server.closeAllConnections(), options.closeGraceMs ?? 10_000);
  });
  app.addHook('onClose', async () => clearTimeout(grace));

  app.decorate('openEventStreams', { getter: () => ctx.streams.size });
  healthRoutes(app, ctx);
  runRoutes(app, ctx);
  operateRoutes(app, ctx);
  runEventsRoute(app, ctx);
  runViewRoutes(app, ctx);
  directiveRoutes(app, ctx);
  eventRoutes(app, ctx);
  batchRoutes(app, ctx);
  itemRoutes(app, ctx);
  await consoleRoutes(app, ctx, options.console);
  app.get('/openapi.json', { config: PUBLIC, schema: { hide: true } }, () => app.swagger());
  return app;
}

/** Marks request bodies whose schema takes null as not required (Fastify's own reading). */
function optionalBodies<T>(document: T): T {
  type Operation = {
    requestBody?: {
      required?: boolean;
      content?: Record<string, { schema?: { nullable?: boolean } }>;
    };
  };
  const paths = (document as { paths?: Record<string, Record<string, Operation>> }).paths ?? {};
  for (const operations of Object.values(paths))
    for (const operation of Object.values(operations)) {
      const body = operation.requestBody;
      if (body && Object.values(body.content ?? {}).every((c) => c.schema?.nullable === true))
        body.required = false;
    }
  return document;
}

function shuttingDown(): DirigentError {
  return DirigentError.fatal(ErrorCode.NOT_READY, 'The server is shutting down.', {
    hint: 'Try again on another server, or once this one is back.',
  });
}
