/**
 * The routes of runs: start, read, list, cancel, signal (events are in run-events-route.ts).
 * Each translates the request into one operation of `Dirigent` and its result into a response.
 */
import { parseTags } from '../engine/run-tags.js';
import { REUSE_POLICIES, type ReusePolicy } from '../operations/idempotency.js';
import type { FastifyInstance } from 'fastify';
import type { RunRecord, RunStatus } from '../engine/run-record.js';
import { DIRECTIVE, SINCE, STATUS, TAG_QUERY, UNTIL } from './run-filter-schemas.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { RunFilter } from '../run-backend/run-filter.js';
import type { ApiContext } from './api-context.js';
import { errorResponses, ref } from './api-schemas.js';
import { parseTime } from './parse-time.js';
import { recordOrAccepted, settleWithin } from './settle-within.js';

/** Statuses in which a run answers a request that waits for it. */
const SETTLED = new Set<RunStatus>(['waiting', 'paused', 'completed', 'failed', 'cancelled']);

/** A run id as the API takes it: a UUID, or any id of letters, digits, `-` and `_`. */
export const RUN_ID = { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$' } as const;
export const RUN_PARAMS = {
  type: 'object',
  required: ['runId'],
  properties: { runId: RUN_ID },
} as const;
const KEY = { type: 'string', minLength: 1, maxLength: 255 } as const;
/** A run's priority as a request gives it. */
export const PRIORITY = {
  type: 'integer',
  minimum: 1,
  maximum: 10,
  description:
    "1 to 10, higher first when workers are busy, start order within a priority; over the directive's <priority> (default 5).",
} as const;
export const WAIT = {
  type: 'object',
  properties: {
    wait: {
      type: 'number',
      minimum: 0,
      maximum: 60,
      description:
        'Seconds to wait for the run to end or wait for a signal; the record then, else 202.',
    },
  },
  additionalProperties: false,
} as const;

interface StartBody {
  directive: string;
  inputs?: Record<string, unknown>;
  tags?: Record<string, string>;
  idempotencyKey?: string;
  reuse?: ReusePolicy;
  priority?: number;
}
interface ListQuery {
  status?: RunStatus;
  directive?: string;
  tag?: string[];
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

/** Registers the run routes on `app`. */
export function runRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { dirigent } = ctx;

  /** The record once the run ends or waits within `seconds`, else as it stands then. */
  const recordWithin = async (runId: string, seconds: number): Promise<RunRecord> => {
    const ms = Math.round(seconds * 1000);
    const record = await settleWithin(
      dirigent.wait(runId, { timeoutMs: ms }),
      ms + 1000,
      ctx.closing,
    );
    return record ?? dirigent.get(runId);
  };

  app.post<{
    Body: StartBody;
    Querystring: { wait?: number };
    Headers: { 'idempotency-key'?: string };
  }>(
    '/v1/runs',
    {
      bodyLimit: ctx.bodyLimits.inputs,
      schema: {
        operationId: 'startRun',
        tags: ['runs'],
        summary: 'Start a run of a directive',
        description:
          'Starts a run; 201 when this request created it, 200 when its idempotency key (body `idempotencyKey` or the `Idempotency-Key` header) named a run already started. With `?wait=<seconds>` (0–60) the answer comes when the run ends or waits within that time (its record), else 202 with its id and status.',
        headers: {
          type: 'object',
          properties: { 'idempotency-key': KEY },
        },
        body: {
          type: 'object',
          required: ['directive'],
          properties: {
            directive: {
              type: 'string',
              minLength: 1,
              maxLength: 512,
              description: 'The item id of a directive of the project (GET /v1/directives).',
            },
            inputs: { type: 'object', additionalProperties: true },
            tags: {
              type: 'object',
              additionalProperties: { type: 'string' },
              description:
                "Tags for the run (name → value), besides and over its directive's <tag>s: what runs are found by.",
            },
            priority: PRIORITY,
            idempotencyKey: KEY,
            reuse: {
              type: 'string',
              enum: [...REUSE_POLICIES],
              description:
                'With an idempotency key whose run failed or was cancelled: `failed` starts a new run, which the key then names; `never` (the default) answers that run.',
            },
          },
          additionalProperties: false,
        },
        querystring: WAIT,
        response: {
          200: { description: 'The idempotency key named this run.', ...ref('RunRecord') },
          201: { description: 'The run was created.', ...ref('RunRecord') },
          202: { description: 'Still running when the wait was over.', ...ref('RunAccepted') },
          ...errorResponses(400, 404, 409, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const { directive, inputs, idempotencyKey, reuse, tags, priority } = request.body;
      const key = keyOf(idempotencyKey, request.headers['idempotency-key']);
      const started = await dirigent.start({
        directive,
        inputs: inputs ?? {},
        trigger: 'api',
        ...(key !== undefined && { idempotencyKey: key }),
        ...(reuse !== undefined && { reuse }),
        ...(tags !== undefined && { tags }),
        ...(priority !== undefined && { priority }),
      });
      const { runId, created } = started;
      void reply.header('location', `/v1/runs/${runId}`);
      const wait = request.query.wait;
      const record = wait === undefined ? started.record : await recordWithin(runId, wait);
      if (wait !== undefined && !SETTLED.has(record.status))
        return reply.code(202).send({ runId, status: record.status, created });
      return reply.code(created ? 201 : 200).send(record);
    },
  );

  app.get<{ Params: { runId: string } }>(
    '/v1/runs/:runId',
    {
      schema: {
        operationId: 'getRun',
        tags: ['runs'],
        summary: "A run's record",
        description:
          'Its status, steps, outputs, the instructions and signals it waits for (`waiting`), and its error.',
        params: RUN_PARAMS,
        response: { 200: ref('RunRecord'), ...errorResponses(400, 404) },
      },
    },
    (request) => dirigent.get(request.params.runId),
  );

  app.get<{ Querystring: ListQuery }>(
    '/v1/runs',
    {
      schema: {
        operationId: 'listRuns',
        tags: ['runs'],
        summary: 'List runs, newest first, a page at a time',
        querystring: {
          type: 'object',
          properties: {
            status: STATUS,
            directive: DIRECTIVE,
            tag: TAG_QUERY,
            since: SINCE,
            until: UNTIL,
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
            cursor: {
              type: 'string',
              maxLength: 1024,
              description: 'The `next` of the previous page.',
            },
          },
          additionalProperties: false,
        },
        response: { 200: ref('RunPage'), ...errorResponses(400) },
      },
    },
    (request) => {
      const q = request.query;
      const tags = parseTags(q.tag ?? [], ':');
      const filter: RunFilter = {
        ...(q.status !== undefined && { status: q.status }),
        ...(q.directive !== undefined && { directive: q.directive }),
        ...(tags && { tags }),
        ...(q.since !== undefined && { since: parseTime(q.since, 'since') }),
        ...(q.until !== undefined && { until: parseTime(q.until, 'until') }),
        ...(q.limit !== undefined && { limit: q.limit }),
        ...(q.cursor !== undefined && { cursor: q.cursor }),
      };
      return dirigent.list(filter);
    },
  );

  app.post<{
    Params: { runId: string };
    Body: { reason?: string; compensate?: boolean } | null;
  }>(
    '/v1/runs/:runId/cancel',
    {
      bodyLimit: ctx.bodyLimits.small,
      schema: {
        operationId: 'cancelRun',
        tags: ['runs'],
        summary: 'Cancel a run, stopping its running work',
        description:
          'The answer comes when the run has ended: after the compensations of its completed steps (`<compensate>`), unless `compensate` is false.',
        params: RUN_PARAMS,
        body: {
          type: ['object', 'null'],
          properties: {
            reason: { type: 'string', maxLength: 1000 },
            compensate: {
              type: 'boolean',
              default: true,
              description:
                "Whether the compensations of the run's completed steps run before it ends; false ends it at once, what its steps did left as it is.",
            },
          },
          additionalProperties: false,
        },
        response: { 200: ref('RunRecord'), ...errorResponses(400, 404, 409, 413, 415) },
      },
    },
    (request) =>
      dirigent.cancel(
        request.params.runId,
        request.body?.reason ?? 'Cancelled through the API.',
        request.body?.compensate === false ? { compensate: false } : {},
      ),
  );

  app.post<{
    Params: { runId: string; name: string };
    Body: { payload?: unknown } | null;
    Querystring: { wait?: number };
  }>(
    '/v1/runs/:runId/signals/:name',
    {
      bodyLimit: ctx.bodyLimits.payload,
      schema: {
        operationId: 'signalRun',
        tags: ['runs'],
        summary: 'Send a signal to a waiting run',
        description:
          "The payload is the waiting step's result. When the step declares its answer (`waiting[].answer` of the run's record), a payload that does not match is refused with 422 INVALID_PAYLOAD, every problem in `details.problems`, and the run waits on unchanged. The answer comes when the run ends or waits again (its record); with `?wait=<seconds>` at most that late, else 202.",
        params: {
          type: 'object',
          required: ['runId', 'name'],
          properties: {
            runId: RUN_ID,
            name: {
              type: 'string',
              minLength: 1,
              maxLength: 256,
              description: 'The signal: the waiting step, or its <wait signal>.',
            },
          },
        },
        body: {
          type: ['object', 'null'],
          properties: { payload: { description: 'Any JSON value (default null).' } },
          additionalProperties: false,
        },
        querystring: WAIT,
        response: {
          200: ref('RunRecord'),
          202: { description: 'Still running when the wait was over.', ...ref('RunAccepted') },
          ...errorResponses(400, 404, 409, 413, 415, 422),
        },
      },
    },
    (request, reply) => {
      const { runId, name } = request.params;
      const signalled = dirigent.signal(runId, name, request.body?.payload ?? null);
      return recordOrAccepted(ctx, reply, runId, signalled, request.query.wait);
    },
  );
}

/** The idempotency key of a request: the body's or the header's, which must agree if both. */
function keyOf(body: string | undefined, header: string | undefined): string | undefined {
  if (body !== undefined && header !== undefined && body !== header)
    throw DirigentError.fatal(
      ErrorCode.INVALID_REQUEST,
      'The Idempotency-Key header and the body’s idempotencyKey differ.',
      { hint: 'Send the key once, in the header or in the body.' },
    );
  return body ?? header;
}
