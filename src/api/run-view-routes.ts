/**
 * The routes a console reads runs with (`Dirigent.runs`): a run's whole view, counts by status,
 * and the runs as they start and change, as server-sent events.
 */
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from './api-context.js';
import { errorResponses } from './api-schemas.js';
import { parseTime } from './parse-time.js';
import { parseTags } from '../engine/run-tags.js';
import { DIRECTIVE, SINCE, TAG_QUERY, UNTIL } from './run-filter-schemas.js';
import { RUN_ID } from './run-routes.js';
import { SseStream } from './sse-stream.js';

/** Registers the routes on `app`. */
export function runViewRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { dirigent } = ctx;

  app.get<{ Params: { runId: string } }>(
    '/v1/runs/:runId/view',
    {
      schema: {
        operationId: 'viewRun',
        tags: ['runs'],
        summary: 'All a page shows of a run',
        description:
          "Its record, inputs, each step's result and error, its child and parent runs, its trace id, the directive's text and graph, and the waterfall of its steps.",
        params: { type: 'object', required: ['runId'], properties: { runId: RUN_ID } },
        response: { 200: { $ref: 'RunView#' }, ...errorResponses(400, 404) },
      },
    },
    (request) => dirigent.runs.inspect(request.params.runId),
  );

  app.get<{ Querystring: { directive?: string; tag?: string[]; since?: string; until?: string } }>(
    '/v1/runs/counts',
    {
      schema: {
        operationId: 'countRuns',
        tags: ['runs'],
        summary: 'How many runs there are, by status',
        querystring: {
          type: 'object',
          properties: {
            directive: DIRECTIVE,
            tag: TAG_QUERY,
            since: SINCE,
            until: UNTIL,
          },
          additionalProperties: false,
        },
        response: { 200: { $ref: 'RunCounts#' }, ...errorResponses(400) },
      },
    },
    (request) => {
      const q = request.query;
      const tags = parseTags(q.tag ?? [], ':');
      return dirigent.runs.counts({
        ...(q.directive !== undefined && { directive: q.directive }),
        ...(tags && { tags }),
        ...(q.since !== undefined && { since: parseTime(q.since, 'since') }),
        ...(q.until !== undefined && { until: parseTime(q.until, 'until') }),
      });
    },
  );

  app.get(
    '/v1/runs/events',
    {
      schema: {
        operationId: 'runsEvents',
        tags: ['runs'],
        summary: 'Runs as they start and change status, as server-sent events',
        description:
          'First `runs.open` (then list the runs: nothing after this event is missed), then `runs.changed` with `{"runs": [RunSummary…]}` for each batch of runs that started or changed status (looked for every 500 ms); a comment line every 15 s keeps the connection alive. The stream ends when the client leaves or the server closes.',
        produces: ['text/event-stream'],
        response: {
          200: { description: 'An event stream (text/event-stream).', type: 'string' },
          ...errorResponses(),
        },
      },
    },
    (_request, reply) => {
      reply.hijack();
      const stream = new SseStream(reply.raw, {
        heartbeatMs: ctx.heartbeatMs,
        headers: reply.getHeaders(),
      });
      ctx.streams.add(stream);
      const stop = dirigent.runs.watch((runs) => stream.send('runs.changed', { runs }));
      stream.onClose(() => {
        stop();
        ctx.streams.delete(stream);
      });
      stream.send('runs.open', {});
      void ctx.closing.then(() => stream.end());
    },
  );
}
