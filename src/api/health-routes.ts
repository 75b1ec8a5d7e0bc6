/** `/healthz` (the process answers) and `/readyz` (runs can be taken up now): public probes. */
import type { FastifyInstance } from 'fastify';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { ApiContext } from './api-context.js';
import { ref } from './api-schemas.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route anyone may call: no token asked, no rate limit. */
    public?: boolean;
  }
}

/** Route options that make a route public: no token, no rate limit. */
export const PUBLIC = { public: true, rateLimit: false } as const;

/** Registers the probes on `app`. */
export function healthRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get(
    '/healthz',
    {
      config: PUBLIC,
      schema: {
        operationId: 'health',
        tags: ['probes'],
        summary: 'The process is up',
        security: [],
        response: {
          200: {
            type: 'object',
            required: ['ok'],
            properties: { ok: { type: 'boolean' } },
            additionalProperties: false,
          },
        },
      },
    },
    () => ({ ok: true }),
  );

  app.get(
    '/readyz',
    {
      config: PUBLIC,
      schema: {
        operationId: 'ready',
        tags: ['probes'],
        summary: 'Runs can be taken up now',
        description:
          'Embedded: always. On Redis: when Redis answers and a worker takes runs; 503 NOT_READY otherwise.',
        security: [],
        response: {
          200: {
            type: 'object',
            required: ['ready', 'mode', 'detail'],
            properties: {
              ready: { type: 'boolean' },
              mode: { type: 'string', enum: ['embedded', 'redis'] },
              detail: { type: 'string' },
            },
            additionalProperties: false,
          },
          503: { description: 'Not ready (NOT_READY).', ...ref('ErrorResponse') },
        },
      },
    },
    async () => {
      const mode = ctx.dirigent.mode;
      const { ok, detail } = await ctx.dirigent.ready().catch((err: unknown) => ({
        ok: false,
        detail: `cannot ask Redis: ${DirigentError.from(err).message}`,
      }));
      if (!ok)
        throw DirigentError.fatal(ErrorCode.NOT_READY, `Not ready: ${detail}.`, {
          hint:
            mode === 'redis'
              ? 'Start a worker for this deployment (`dirigent worker`) and check that Redis answers.'
              : 'Try again shortly.',
          details: { mode, detail },
        });
      return { ready: true, mode, detail };
    },
  );
}
