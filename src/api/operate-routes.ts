/**
 * The routes that operate runs (DESIGN.md, "Operating runs"): redrive, rerun, bulk actions, and
 * pausing and resuming directives. Each translates
 * the request into one operation of `Dirigent` and its result into a response.
 */
import type { FastifyInstance } from 'fastify';
import type { RunStatus } from '../engine/run-record.js';
import { DIRECTIVE, SINCE, STATUS, TAGS, UNTIL } from './run-filter-schemas.js';
import { BULK_ACTIONS, type BulkActionName } from '../operations/bulk-action.js';
import type { PauseTarget } from '../operations/pause.js';
import { parseTime } from './parse-time.js';
import type { ApiContext } from './api-context.js';
import { errorResponses, ref } from './api-schemas.js';
import { PRIORITY, RUN_PARAMS, WAIT } from './run-routes.js';
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

  app.post<{
    Params: { runId: string };
    Body: { from?: string; inputs?: Record<string, unknown>; priority?: number } | null;
    Querystring: { wait?: number };
  }>(
    '/v1/runs/:runId/rerun',
    {
      bodyLimit: ctx.bodyLimits.inputs,
      schema: {
        operationId: 'rerunRun',
        tags: ['runs'],
        summary: 'Rerun a run from one of its steps, as a new run',
        description:
          "A new run of the run's directive that starts at `from` (default: the step it failed at) with its inputs, `inputs` laid over them and the whole validated (422 INVALID_INPUTS), and with the state and step results that existed before that step: the steps before it are not run again. The new run's record says `rerunOf`; the old run's reruns are listed by `GET /v1/runs?tag=dirigent.rerun-of:<runId>`. 409 RUN_NOT_ENDED while the run goes on; 400 INVALID_REQUEST for a step it cannot start at. Answers 201 with the new run's record (with `?wait=<seconds>`, once it ends or waits, else 202).",
        params: RUN_PARAMS,
        body: {
          type: ['object', 'null'],
          properties: {
            from: {
              type: 'string',
              minLength: 1,
              maxLength: 256,
              description: 'The step to start at (a step of the process itself).',
            },
            inputs: {
              type: 'object',
              additionalProperties: true,
              description: "Inputs laid over the run's own.",
            },
            priority: PRIORITY,
          },
          additionalProperties: false,
        },
        querystring: WAIT,
        response: {
          201: { description: 'The new run.', ...ref('RunRecord') },
          202: { description: 'Still running when the wait was over.', ...ref('RunAccepted') },
          ...errorResponses(400, 404, 409, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const handle = await dirigent.rerun(request.params.runId, {
        trigger: 'api',
        ...(body.from !== undefined && { from: body.from }),
        ...(body.inputs !== undefined && { inputs: body.inputs }),
        ...(body.priority !== undefined && { priority: body.priority }),
      });
      void reply.header('location', `/v1/runs/${handle.runId}`);
      if (request.query.wait === undefined) return reply.code(201).send(handle.record);
      const { runId } = handle;
      const answer = await recordOrAccepted(ctx, reply, runId, handle.wait(), request.query.wait);
      // A 202 is sent already; the record is the new run's.
      return reply.sent ? answer : reply.code(201).send(answer);
    },
  );

  app.post<{
    Body: {
      action: BulkActionName;
      filter?: {
        status?: RunStatus;
        directive?: string;
        tags?: Record<string, string>;
        since?: string;
        until?: string;
      };
      dryRun?: boolean;
      actionId?: string;
      by?: string;
    };
  }>(
    '/v1/runs/bulk',
    {
      bodyLimit: ctx.bodyLimits.small,
      schema: {
        operationId: 'bulkRuns',
        tags: ['runs'],
        summary: 'Cancel, redrive or rerun every run a filter matches',
        description:
          'With `dryRun`, how many runs match and a sample, changing nothing. Otherwise the action is done on each run (a few at once, the runs read a page at a time) and the answer is its report: matched, acted (cancelled, redriven, rerun), skipped (the action did not apply: an ended run to cancel, a completed one to redrive), failed (with the first failures). The action keeps under its `actionId` what it did to each run: the same request again (or the same `actionId`) after an interruption acts on each run once.',
        body: {
          type: 'object',
          required: ['action'],
          properties: {
            action: { type: 'string', enum: [...BULK_ACTIONS] },
            filter: {
              type: 'object',
              properties: {
                status: STATUS,
                directive: DIRECTIVE,
                tags: TAGS,
                since: SINCE,
                until: UNTIL,
              },
              additionalProperties: false,
            },
            dryRun: { type: 'boolean', default: false },
            actionId: {
              type: 'string',
              pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$',
              description: "Go on with an interrupted action (a report's actionId).",
            },
            by: BY,
          },
          additionalProperties: false,
        },
        response: { 200: ref('BulkReport'), ...errorResponses(400, 413, 415) },
      },
    },
    (request) => {
      const { action, filter = {}, dryRun, actionId, by } = request.body;
      return dirigent.bulk({
        action,
        filter: {
          ...(filter.status !== undefined && { status: filter.status }),
          ...(filter.directive !== undefined && { directive: filter.directive }),
          ...(filter.tags !== undefined && { tags: filter.tags }),
          ...(filter.since !== undefined && { since: parseTime(filter.since, 'since') }),
          ...(filter.until !== undefined && { until: parseTime(filter.until, 'until') }),
        },
        dryRun: dryRun === true,
        by: by ?? 'api',
        ...(actionId !== undefined && { actionId }),
      });
    },
  );

  const PAUSE_STATE = {
    type: 'object',
    required: ['all', 'directives'],
    properties: {
      all: { type: 'boolean', description: 'The whole deployment is paused.' },
      directives: {
        type: 'array',
        items: { type: 'string' },
        description: 'The directives paused one by one (item ids).',
      },
    },
    additionalProperties: false,
  } as const;
  const TARGET = {
    type: 'object',
    properties: {
      directive: {
        type: 'string',
        minLength: 1,
        maxLength: 512,
        description: 'A directive (item id).',
      },
      all: { type: 'boolean', description: 'The whole deployment.' },
    },
    additionalProperties: false,
  } as const;
  const targetOf = (body: { directive?: string; all?: boolean } | null): PauseTarget =>
    body?.all === true && body.directive === undefined
      ? { all: true }
      : ({ directive: body?.directive, ...(body?.all === true && { all: true }) } as PauseTarget);

  app.get(
    '/v1/pauses',
    {
      schema: {
        operationId: 'getPauses',
        tags: ['runs'],
        summary: 'The pauses in force',
        response: { 200: PAUSE_STATE, ...errorResponses(400) },
      },
    },
    () => dirigent.pauses(),
  );

  for (const how of ['pause', 'resume'] as const) {
    const description =
      how === 'pause'
        ? 'Pauses a directive (`{directive}`) or the whole deployment (`{all: true}`): its runs hold their next steps and wait with status `paused` (new ones before their first step, those under way after the step they are in), holding no worker slot; signals and cancels still reach them. Answers the pauses in force. 404 UNKNOWN_DIRECTIVE for a directive the project does not have.'
        : 'Lifts the pause of a directive, or with `{all: true}` every pause, then begins the held steps of the paused runs no pause holds any more, in the order they started. Answers the pauses still in force and how many runs were resumed.';
    const response =
      how === 'pause'
        ? PAUSE_STATE
        : {
            type: 'object',
            required: ['paused', 'resumed'],
            properties: { paused: PAUSE_STATE, resumed: { type: 'integer' } },
            additionalProperties: false,
          };
    const act = (target: PauseTarget) =>
      how === 'pause' ? dirigent.pause(target) : dirigent.resume(target);
    app.post<{ Body: { directive?: string; all?: boolean } | null }>(
      `/v1/${how}`,
      {
        bodyLimit: ctx.bodyLimits.small,
        schema: {
          operationId: `${how}Runs`,
          tags: ['runs'],
          summary:
            how === 'pause'
              ? 'Pause a directive, or everything'
              : 'Resume a directive, or everything',
          description,
          body: TARGET,
          response: { 200: response, ...errorResponses(400, 404, 413, 415) },
        },
      },
      (request) => act(targetOf(request.body)),
    );
    app.post<{ Params: { directive: string } }>(
      `/v1/directives/:directive/${how}`,
      {
        schema: {
          operationId: `${how}Directive`,
          tags: ['directives'],
          summary: how === 'pause' ? 'Pause a directive' : 'Resume a directive',
          description: `${description} The directive's item id is one path segment: its \`/\` written %2F.`,
          params: {
            type: 'object',
            required: ['directive'],
            properties: { directive: { type: 'string', minLength: 1, maxLength: 512 } },
          },
          response: { 200: response, ...errorResponses(400, 404) },
        },
      },
      (request) => act({ directive: request.params.directive }),
    );
  }
}
