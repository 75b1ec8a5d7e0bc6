/**
 * The JSON schemas of what the routes a console reads answer (registered by `$id` beside
 * `api-schemas.ts`'s): a run's whole view, counts by status, runs as they change. Objects of the
 * engine allow properties beyond those listed, as there.
 */
import { RUN_STATUSES } from '../engine/run-record.js';

const STATUS = { type: 'string', enum: RUN_STATUSES } as const;
const OBJECT = { type: 'object', additionalProperties: true } as const;

/** Every console schema with an `$id`, in the order they are registered. */
export const CONSOLE_SCHEMAS = [
  {
    $id: 'RunSummary',
    type: 'object',
    description: 'A run as a list shows it.',
    required: ['runId', 'directive', 'status', 'startedAt'],
    properties: {
      runId: { type: 'string' },
      directive: { type: 'string' },
      status: STATUS,
      startedAt: { type: 'number', description: 'Epoch ms.' },
      endedAt: { type: ['number', 'null'], description: 'Epoch ms.' },
      error: { type: ['object', 'null'], additionalProperties: true },
      waiting: { type: 'integer', description: 'Steps waiting for a signal.' },
      tags: { type: 'object', additionalProperties: { type: 'string' } },
      summary: { type: 'string', description: 'Its inputs in a few words.' },
    },
    additionalProperties: false,
  },
  {
    $id: 'RunCounts',
    type: 'object',
    description:
      'How many runs match, in all and by status (runs still queued on Redis are not counted).',
    required: ['total', 'byStatus'],
    properties: {
      total: { type: 'integer' },
      byStatus: {
        type: 'object',
        properties: Object.fromEntries(RUN_STATUSES.map((s) => [s, { type: 'integer' }])),
        additionalProperties: false,
      },
    },
    additionalProperties: false,
  },
  {
    $id: 'RunView',
    type: 'object',
    description:
      "All a page shows of a run: its record, inputs, each step's latest pass (status, result, error, attempts, times), the runs it started and the one that started it, its trace id, the directive it follows (text and graph: nodes, clusters, edges) and the waterfall of its steps.",
    required: ['record', 'inputs', 'steps', 'children', 'timeline'],
    properties: {
      record: { $ref: 'RunRecord#' },
      inputs: { type: ['object', 'null'], additionalProperties: true },
      steps: { type: 'object', additionalProperties: OBJECT },
      parentRunId: { type: ['string', 'null'] },
      children: {
        type: 'array',
        items: {
          type: 'object',
          required: ['step', 'runId'],
          properties: { step: { type: 'string' }, runId: { type: 'string' } },
          additionalProperties: false,
        },
      },
      traceId: { type: ['string', 'null'] },
      source: {
        type: ['object', 'null'],
        properties: { file: { type: 'string' }, text: { type: 'string' } },
        additionalProperties: false,
      },
      graph: {
        type: ['object', 'null'],
        properties: {
          nodes: { type: 'array', items: OBJECT },
          clusters: { type: 'array', items: OBJECT },
          edges: { type: 'array', items: OBJECT },
        },
        additionalProperties: false,
      },
      graphError: { type: 'string' },
      timeline: { type: 'array', items: OBJECT },
    },
    additionalProperties: false,
  },
] as const;
