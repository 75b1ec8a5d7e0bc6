/**
 * `GET /v1/runs/:runId/events`: a run's event feed as server-sent events (see
 * run-event-relay.ts), from `Dirigent.watch`. A client that reconnects with `Last-Event-ID` (or
 * `?after=`) gets what came after that event. The stream ends when the run ends, when the
 * client goes away, or when the server closes.
 */
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from './api-context.js';
import { errorResponses } from './api-schemas.js';
import { relayRunEvents } from './run-event-relay.js';
import { RUN_ID } from './run-routes.js';
import { SseStream } from './sse-stream.js';

/** Registers the events route on `app`. */
export function runEventsRoute(app: FastifyInstance, ctx: ApiContext): void {
  const { dirigent } = ctx;
  app.get<{
    Params: { runId: string };
    Querystring: { after?: string };
    Headers: { 'last-event-id'?: string };
  }>(
    '/v1/runs/:runId/events',
    {
      schema: {
        operationId: 'runEvents',
        tags: ['runs'],
        summary: "A run's progress as server-sent events",
        description:
          "The run's event feed: `run.state` (the record, first), then `run.started`, `step.started`, `step.retrying`, `step.ended`, `run.waiting`, `run.paused` in the order they happened (a child run's step events too, with its `runId`), and `run.ended` (the record; then the stream ends; a run redriven after it goes on with `run.redriven`, read after that event's id), each with JSON data and the event's id in the feed. Reconnecting with `Last-Event-ID` (or `?after=<id>`) goes on after that event, without `run.state` (unless the feed no longer holds it). A comment line every 15 s keeps the connection alive.",
        params: {
          type: 'object',
          required: ['runId'],
          properties: { runId: RUN_ID },
        },
        querystring: {
          type: 'object',
          properties: {
            after: {
              type: 'string',
              maxLength: 64,
              description: 'Go on after this event id (as `Last-Event-ID` does).',
            },
          },
        },
        headers: {
          type: 'object',
          properties: { 'last-event-id': { type: 'string', maxLength: 64 } },
        },
        produces: ['text/event-stream'],
        response: {
          200: { description: 'An event stream (text/event-stream).', type: 'string' },
          ...errorResponses(400, 404),
        },
      },
    },
    async (request, reply) => {
      const { runId } = request.params;
      const after = request.headers['last-event-id'] ?? request.query.after;
      const feed = await dirigent.watch(runId, after === undefined ? {} : { after });
      reply.hijack();
      const stream = new SseStream(reply.raw, {
        heartbeatMs: ctx.heartbeatMs,
        headers: reply.getHeaders(),
      });
      ctx.streams.add(stream);
      stream.onClose(() => ctx.streams.delete(stream));
      void relayRunEvents(feed, stream);
      // A stream opened while the server began to close ends as the others did.
      void ctx.closing.then(() => stream.end());
    },
  );
}
