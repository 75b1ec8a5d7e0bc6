/**
 * `GET /v1/runs/:runId/events`: a run's progress as server-sent events (see run-event-relay.ts),
 * from `Dirigent.watch`. The watch ends when the run ends, when the client goes away, or when
 * the server closes.
 */
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from './api-context.js';
import { errorResponses } from './api-schemas.js';
import { RunEventRelay } from './run-event-relay.js';
import { RUN_ID } from './run-routes.js';
import { SseStream } from './sse-stream.js';

/** Registers the events route on `app`. */
export function runEventsRoute(app: FastifyInstance, ctx: ApiContext): void {
  const { dirigent } = ctx;
  app.get<{ Params: { runId: string } }>(
    '/v1/runs/:runId/events',
    {
      schema: {
        operationId: 'runEvents',
        tags: ['runs'],
        summary: "A run's progress as server-sent events",
        description:
          'Events `run.state` (the record, first), `step.started`, `step.ended`, `step.retrying`, `run.waiting`, and `run.ended` (the record, last; then the stream ends), each with JSON data; a comment line every 15 s keeps the connection alive.',
        params: {
          type: 'object',
          required: ['runId'],
          properties: { runId: RUN_ID },
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
      const relay = new RunEventRelay(runId);
      const watch = await dirigent.watch(runId, relay.observer);
      let stop: (() => void) | undefined = watch.stop;
      reply.hijack();
      const stream = new SseStream(reply.raw, {
        heartbeatMs: ctx.heartbeatMs,
        headers: reply.getHeaders(),
      });
      ctx.streams.add(stream);
      stream.onClose(() => {
        stop?.();
        stop = undefined;
        ctx.streams.delete(stream);
      });
      relay.begin(watch.record, stream);
      // A stream opened while the server began to close ends as the others did.
      void ctx.closing.then(() => stream.end());
    },
  );
}
