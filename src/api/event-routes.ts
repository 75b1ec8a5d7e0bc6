/**
 * `POST /v1/events`: sends an event; every directive of the project with `<on event="…">` runs once
 * per event id, as `Dirigent.emit` starts it.
 */
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from './api-context.js';
import { errorResponses } from './api-schemas.js';

/** Registers the event route on `app`. */
export function eventRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { dirigent } = ctx;
  app.post<{ Body: { name: string; id?: string; payload?: Record<string, unknown> } }>(
    '/v1/events',
    {
      bodyLimit: ctx.bodyLimits.payload,
      schema: {
        operationId: 'emitEvent',
        tags: ['events'],
        summary: 'Send an event: each subscribed directive runs once per event id',
        description:
          'Starts every directive that declares `<on event="name">`, with `payload` as its input `event`, once per event `id` (default: a new one): sending the same event again starts nothing new and names the runs it started (`created: false`). A subscriber that cannot start says why in its entry.',
        body: {
          type: 'object',
          required: ['name'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 128 },
            id: { type: 'string', minLength: 1, maxLength: 255 },
            payload: { type: 'object' },
          },
          additionalProperties: false,
        },
        response: {
          200: {
            type: 'object',
            required: ['event', 'id', 'runs'],
            properties: {
              event: { type: 'string' },
              id: { type: 'string' },
              runs: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['directive'],
                  properties: {
                    directive: { type: 'string' },
                    runId: { type: 'string' },
                    created: { type: 'boolean' },
                    error: {
                      type: 'object',
                      required: ['code', 'message'],
                      properties: { code: { type: 'string' }, message: { type: 'string' } },
                    },
                  },
                },
              },
            },
            additionalProperties: false,
          },
          ...errorResponses(400, 413, 415),
        },
      },
    },
    (request) =>
      dirigent.emit(request.body.name, request.body.payload ?? {}, {
        ...(request.body.id !== undefined && { id: request.body.id }),
      }),
  );
}
