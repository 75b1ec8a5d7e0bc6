/**
 * The JSON schemas the HTTP API shares between routes: what responses look like (and so what the
 * OpenAPI document at `/openapi.json` says), registered once by `$id` and referred to as
 * `{ $ref: 'RunRecord#' }`. Objects of the engine (run records, diagnostics) allow properties
 * beyond those listed, so a field the engine adds reaches clients before this file names it.
 */
import { INPUT_TYPES } from '../directive/ast.js';

/** The types an answer may have (those of inputs). */
const ANSWER_TYPES = INPUT_TYPES;

const LOCATION = {
  type: 'object',
  description: 'Where in a directive file the problem is.',
  properties: {
    file: { type: 'string' },
    line: { type: 'integer' },
    column: { type: 'integer' },
  },
  additionalProperties: true,
} as const;

/** Every schema with an `$id`, in the order they are registered. */
export const SHARED_SCHEMAS = [
  {
    $id: 'ErrorResponse',
    type: 'object',
    description:
      'Every error: a stable code (the same the CLI prints), a message, how to fix it, and facts.',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'string', description: 'A stable error code, e.g. RUN_NOT_FOUND.' },
          message: { type: 'string' },
          hint: { type: 'string', description: 'How to fix it.' },
          details: { type: 'object', additionalProperties: true },
        },
        additionalProperties: false,
      },
    },
    additionalProperties: false,
  },
  {
    $id: 'StepEntry',
    type: 'object',
    description: 'One execution of a step, in the order steps ended.',
    required: ['name', 'status', 'attempts', 'durationMs'],
    properties: {
      name: { type: 'string' },
      status: { type: 'string', enum: ['completed', 'failed', 'skipped', 'cancelled'] },
      attempts: { type: 'integer' },
      durationMs: { type: 'number' },
      error: {
        type: 'object',
        properties: { code: { type: 'string' }, message: { type: 'string' }, location: LOCATION },
        additionalProperties: true,
      },
    },
    additionalProperties: true,
  },
  {
    $id: 'WaitingStep',
    type: 'object',
    description: 'A step that waits for a signal (POST /v1/runs/{runId}/signals/{signal}).',
    required: ['step', 'signal'],
    properties: {
      step: { type: 'string' },
      runId: { type: 'string', description: 'The child run that waits, if not this run.' },
      signal: { type: 'string' },
      text: { type: 'string', description: "An instruction step's text." },
      deadline: { type: 'number', description: 'When the wait times out (epoch ms).' },
      answer: {
        type: 'object',
        description:
          'What the answer must hold (the step\'s <answer>s): an object of `fields`, or one value of `type` (`kind` "whole"). A payload that does not match is refused with 422 INVALID_PAYLOAD.',
        required: ['kind'],
        properties: {
          kind: { type: 'string', enum: ['fields', 'whole'] },
          type: {
            type: 'string',
            enum: [...ANSWER_TYPES],
            description: 'The type of a whole answer.',
          },
          description: { type: 'string' },
          fields: {
            type: 'array',
            items: {
              type: 'object',
              required: ['name', 'type', 'required'],
              properties: {
                name: { type: 'string' },
                type: { type: 'string', enum: [...ANSWER_TYPES] },
                required: { type: 'boolean' },
                description: { type: 'string' },
              },
              additionalProperties: true,
            },
          },
        },
        additionalProperties: true,
      },
    },
    additionalProperties: true,
  },
  {
    $id: 'RunRecord',
    type: 'object',
    description: 'A run: its status, steps, outputs, what it waits for, and its error.',
    required: ['runId', 'directive', 'status', 'steps', 'startedAt'],
    properties: {
      runId: { type: 'string' },
      directive: { type: 'string' },
      status: {
        type: 'string',
        enum: ['queued', 'running', 'waiting', 'paused', 'completed', 'failed', 'cancelled'],
      },
      outputs: { type: ['object', 'null'], additionalProperties: true },
      steps: { type: 'array', items: { $ref: 'StepEntry#' } },
      error: {
        type: ['object', 'null'],
        properties: {
          code: { type: 'string' },
          message: { type: 'string' },
          step: { type: ['string', 'null'] },
          location: LOCATION,
        },
        additionalProperties: true,
      },
      waiting: { type: 'array', items: { $ref: 'WaitingStep#' } },
      startedAt: { type: 'number', description: 'Epoch ms.' },
      endedAt: { type: ['number', 'null'], description: 'Epoch ms.' },
      summary: {
        type: 'string',
        description: 'Its inputs in a few words (customer=c7, amount=12), capped: for lists.',
      },
      tags: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description:
          "The run's tags (name → value): its directive's <tag>s and the start's; what runs are found by (GET /v1/runs?tag=name:value).",
      },
      redrives: {
        type: 'array',
        description:
          'Each time the run was redriven after it failed or was cancelled, oldest first.',
        items: {
          type: 'object',
          required: ['at', 'by', 'steps', 'status'],
          properties: {
            at: { type: 'number', description: 'Epoch ms.' },
            by: { type: 'string', description: 'Who asked (cli:<user>, api, …).' },
            steps: {
              type: 'array',
              items: { type: 'string' },
              description: 'The steps it went on from.',
            },
            status: { type: 'string', enum: ['failed', 'cancelled'] },
            error: { type: ['object', 'null'], additionalProperties: true },
          },
          additionalProperties: true,
        },
      },
      rerunOf: {
        type: 'object',
        description: 'The run this one reruns, and the step it reran from.',
        required: ['runId', 'step'],
        properties: { runId: { type: 'string' }, step: { type: 'string' } },
        additionalProperties: false,
      },
    },
    additionalProperties: true,
  },
  {
    $id: 'BulkReport',
    type: 'object',
    description: 'What a bulk action did (or, dry, would act on).',
    required: ['actionId', 'action', 'dryRun', 'matched', 'acted', 'skipped', 'failed'],
    properties: {
      actionId: {
        type: 'string',
        description: 'Give it again to go on with an interrupted action.',
      },
      action: { type: 'string' },
      dryRun: { type: 'boolean' },
      matched: { type: 'integer', description: 'Runs the filter matched.' },
      acted: { type: 'integer', description: 'Runs acted on.' },
      skipped: { type: 'integer', description: 'Runs the action did not apply to.' },
      failed: { type: 'integer', description: 'Runs the action failed on.' },
      failures: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            runId: { type: 'string' },
            code: { type: 'string' },
            message: { type: 'string' },
          },
          additionalProperties: false,
        },
      },
      sample: {
        type: 'array',
        description: 'Dry run: the first runs matched.',
        items: {
          type: 'object',
          properties: {
            runId: { type: 'string' },
            directive: { type: 'string' },
            status: { type: 'string' },
            startedAt: { type: 'number' },
            summary: { type: 'string' },
          },
          additionalProperties: false,
        },
      },
    },
    additionalProperties: false,
  },
  {
    $id: 'RunAccepted',
    type: 'object',
    description: 'A run that had not ended nor waited when the answer was due.',
    required: ['runId', 'status'],
    properties: {
      runId: { type: 'string' },
      status: { type: 'string' },
      created: { type: 'boolean', description: 'Whether this request started the run.' },
    },
    additionalProperties: false,
  },
  {
    $id: 'RunPage',
    type: 'object',
    description: 'Runs, newest first; `next` is the cursor of the next page, when there is one.',
    required: ['runs'],
    properties: {
      runs: { type: 'array', items: { $ref: 'RunRecord#' } },
      next: { type: 'string' },
    },
    additionalProperties: false,
  },
  {
    $id: 'Diagnostic',
    type: 'object',
    required: ['severity', 'code', 'message'],
    properties: {
      severity: { type: 'string', enum: ['error', 'warning'] },
      code: { type: 'string' },
      message: { type: 'string' },
      loc: LOCATION,
      hint: { type: 'string' },
    },
    additionalProperties: true,
  },
  {
    $id: 'DirectiveInfo',
    type: 'object',
    description: 'A directive of the project, with the inputs to start it, or why it cannot run.',
    required: ['directive', 'space', 'valid', 'inputs', 'errors', 'warnings'],
    properties: {
      directive: { type: 'string', description: 'Its item id: what POST /v1/runs takes.' },
      space: { type: 'string' },
      valid: { type: 'boolean' },
      name: { type: 'string' },
      version: { type: 'string' },
      title: { type: 'string' },
      description: { type: 'string' },
      category: { type: 'string' },
      inputs: {
        type: 'array',
        items: {
          type: 'object',
          required: ['name', 'type', 'required'],
          properties: {
            name: { type: 'string' },
            type: { type: 'string' },
            required: { type: 'boolean' },
            default: {},
            description: { type: 'string' },
          },
          additionalProperties: true,
        },
      },
      errors: { type: 'array', items: { $ref: 'Diagnostic#' } },
      warnings: { type: 'array', items: { $ref: 'Diagnostic#' } },
    },
    additionalProperties: true,
  },
  {
    $id: 'Validation',
    type: 'object',
    required: ['valid', 'errors', 'warnings'],
    properties: {
      valid: { type: 'boolean' },
      errors: { type: 'array', items: { $ref: 'Diagnostic#' } },
      warnings: { type: 'array', items: { $ref: 'Diagnostic#' } },
      directive: { $ref: 'DirectiveInfo#' },
    },
    additionalProperties: false,
  },
] as const;

/** `{ $ref: 'Name#' }`: a shared schema by its `$id`. */
export function ref(id: (typeof SHARED_SCHEMAS)[number]['$id']): { $ref: string } {
  return { $ref: `${id}#` };
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed request (INVALID_REQUEST, with the failing paths in details; INVALID_ITEM_ID).',
  401: 'No valid bearer token (UNAUTHORIZED).',
  404: 'Not found (RUN_NOT_FOUND, UNKNOWN_DIRECTIVE, NOT_FOUND).',
  409: 'Conflicts with the state of the run or key (IDEMPOTENCY_CONFLICT, RUN_NOT_WAITING, UNKNOWN_SIGNAL, RUN_CONFLICT).',
  413: 'Too large (PAYLOAD_TOO_LARGE, INPUT_TOO_LARGE).',
  415: 'Not JSON (UNSUPPORTED_MEDIA_TYPE).',
  422: 'Cannot be carried out as it stands (INVALID_INPUTS, INVALID_PAYLOAD, a directive that does not parse or validate, DIRECTIVE_MISMATCH).',
  429: 'Over the rate limit (RATE_LIMITED); see Retry-After.',
  500: 'An internal error (INTERNAL).',
  503: 'Cannot serve now (REDIS_UNAVAILABLE, NOT_READY).',
};

/** The error responses of a route, for its `schema.response`. */
export function errorResponses(
  ...statuses: number[]
): Record<number, { description: string; $ref: string }> {
  const out: Record<number, { description: string; $ref: string }> = {};
  for (const status of [...statuses, 401, 429, 500, 503].sort((a, b) => a - b))
    out[status] = {
      description: ERROR_DESCRIPTIONS[status] ?? 'An error.',
      ...ref('ErrorResponse'),
    };
  return out;
}
