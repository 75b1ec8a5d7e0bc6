/**
 * Batches over the API, the same batch as `dirigent batch` (batches/batch.ts): `POST
 * /v1/batches` with the inputs in the body starts one in this server (the same body again names the
 * same batch, and resumes it if it stopped), `GET /v1/batches/:batchId` tells how it stands, and
 * `GET /v1/batches/:batchId/results` streams its results, one JSON line per input.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { BatchStatus } from '../batches/batch.js';
import { batchDir } from '../batches/batch-store.js';
import type { ApiContext } from './api-context.js';
import { errorResponses } from './api-schemas.js';

const BATCH_ID = { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$' } as const;

const STATUS = {
  type: 'object',
  required: ['batchId', 'directive', 'state', 'results'],
  properties: {
    batchId: { type: 'string' },
    directive: { type: 'string' },
    state: { type: 'string', enum: ['running', 'finished', 'stopped'] },
    results: {
      type: 'object',
      required: ['done', 'failed'],
      properties: { done: { type: 'integer' }, failed: { type: 'integer' } },
    },
    counts: { type: 'object', additionalProperties: { type: 'integer' } },
    createdAt: { type: 'integer' },
    updatedAt: { type: 'integer' },
  },
} as const;

/** What the API tells of a batch: no paths of this machine. */
function view(s: BatchStatus) {
  return {
    batchId: s.batchId,
    directive: s.directive,
    state: s.state,
    results: s.results,
    ...(s.counts && { counts: s.counts }),
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

/** Registers the batch routes on `app`. */
export function batchRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { dirigent } = ctx;
  /** Batches this server runs now, by id. */
  const running = new Map<string, Promise<unknown>>();
  const stop = new AbortController();
  void ctx.closing.then(() => stop.abort());

  app.post<{
    Body: {
      directive: string;
      inputs: Record<string, unknown>[];
      concurrency?: number;
      ordered?: boolean;
    };
  }>(
    '/v1/batches',
    {
      bodyLimit: ctx.bodyLimits.inputs,
      schema: {
        operationId: 'startBatch',
        tags: ['batches'],
        summary: 'Start a batch: one run of a directive per input',
        description:
          'Starts a batch in this server and answers at once (202) with its id and status. The same directive and inputs name the same batch: sent again, the request answers how it stands (200), and resumes it if it had stopped. Results: GET /v1/batches/{batchId}/results.',
        body: {
          type: 'object',
          required: ['directive', 'inputs'],
          properties: {
            directive: { type: 'string', minLength: 1, maxLength: 512 },
            inputs: { type: 'array', items: { type: 'object' }, minItems: 1 },
            concurrency: { type: 'integer', minimum: 1, maximum: 256 },
            ordered: { type: 'boolean' },
          },
          additionalProperties: false,
        },
        response: { 200: STATUS, 202: STATUS, ...errorResponses(400, 404, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const { directive, inputs, concurrency, ordered } = request.body;
      // The directive must exist and parse before anything is kept.
      await dirigent.load(directive);
      const text = inputs.map((i) => JSON.stringify(i)).join('\n') + '\n';
      const batchId = createHash('sha256')
        .update(`${directive}\0${text}`)
        .digest('hex')
        .slice(0, 16);
      const dir = batchDir(dirigent.projectDir, batchId);
      if (running.has(batchId))
        return reply.code(200).send(view(await dirigent.batchStatus(batchId)));
      const file = join(dir, 'inputs.jsonl');
      await mkdir(dir, { recursive: true });
      await writeFile(file, text);
      const work = dirigent
        .batch({
          directive,
          inputs: file,
          batchId,
          signal: stop.signal,
          ...(concurrency !== undefined && { concurrency }),
          ...(ordered !== undefined && { ordered }),
        })
        .catch((err: unknown) => request.log.error({ err, batchId }, 'batch failed'))
        .finally(() => running.delete(batchId));
      running.set(batchId, work);
      // The batch's state is written before its first input runs: read it back once it is.
      await waitForState(() => dirigent.batchStatus(batchId));
      return reply.code(202).send(view(await dirigent.batchStatus(batchId)));
    },
  );

  app.get<{ Params: { batchId: string } }>(
    '/v1/batches/:batchId',
    {
      schema: {
        operationId: 'batchStatus',
        tags: ['batches'],
        summary: 'How a batch stands',
        params: { type: 'object', required: ['batchId'], properties: { batchId: BATCH_ID } },
        response: { 200: STATUS, ...errorResponses(400, 404) },
      },
    },
    async (request) => view(await dirigent.batchStatus(request.params.batchId)),
  );

  app.get<{ Params: { batchId: string } }>(
    '/v1/batches/:batchId/results',
    {
      schema: {
        operationId: 'batchResults',
        tags: ['batches'],
        summary: "A batch's results so far, one JSON line per input (application/x-ndjson)",
        params: { type: 'object', required: ['batchId'], properties: { batchId: BATCH_ID } },
        produces: ['application/x-ndjson'],
        response: {
          200: {
            description: 'One JSON object per line: line, input, runId, status, outputs or error.',
            type: 'string',
          },
          ...errorResponses(400, 404),
        },
      },
    },
    async (request, reply) => {
      const status = await dirigent.batchStatus(request.params.batchId);
      return reply.type('application/x-ndjson').send(createReadStream(status.out));
    },
  );
}

/** Resolves once `read` succeeds (the batch wrote its state), trying for up to 5 s. */
async function waitForState(read: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (
      await read().then(
        () => true,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 50));
  }
}
