/**
 * The routes that operate runs (DESIGN.md, "Operating runs"): redrive and rerun. Each translates
 * the request into one operation of `Dirigent` and its result into a response.
 */
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from './api-context.js';
import { errorResponses, ref } from './api-schemas.js';
import { RUN_PARAMS, WAIT } from './run-routes.js';
import { recordOrAccepted } from './settle-within.js';

/** Who acts, as a request names it for the run's record (default `api`). */
const BY = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: "Who asks, as the run's record notes it (default `api`).",
} as const;

/** Registers the routes (see the module comment). */
export function operateRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { dirigent } = ctx;

  app.post<{
    Params: { runId: string };
    Body: { by?: string } | null;
    Querystring: { wait?: number };
  }>(
    '/v1/runs/:runId/redrive',
    {
      bodyLimit: ctx.bodyLimits.small,
      schema: {
        operationId: 'redriveRun',
        tags: ['runs'],
        summary: 'Redrive a failed or cancelled run',
        description:
          'The run goes on under its id from the step that failed (or the steps under way when it was cancelled or timed out): the steps that completed keep their results and are not run again; the redriven step counts its attempts on, with its retries allowed again; the record notes the redrive (`redrives`). 409 RUN_NOT_REDRIVABLE for a run that completed, waits or runs, or whose compensations ran. The answer comes when the run ends or waits again (its record); with `?wait=<seconds>` at most that late, else 202.',
        params: RUN_PARAMS,
        body: {
          type: ['object', 'null'],
          properties: { by: BY },
          additionalProperties: false,
        },
        querystring: WAIT,
        response: {
          200: ref('RunRecord'),
          202: { description: 'Still running when the wait was over.', ...ref('RunAccepted') },
          ...errorResponses(400, 404, 409, 413, 415),
        },
      },
    },
    (request, reply) => {
      const { runId } = request.params;
      const redriven = dirigent.redrive(runId, { by: request.body?.by ?? 'api' });
      return recordOrAccepted(ctx, reply, runId, redriven, request.query.wait);
    },
  );
}
