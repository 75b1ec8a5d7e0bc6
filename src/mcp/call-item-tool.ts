/**
 * The MCP face of the item interface: one call of `search`, `load`, `execute` or `sign`, with the
 * seed's argument names, checked against the tool's schema, translated to `Dirigent.items` and
 * its answer translated back into plain JSON with snake_case names. Only translation lives here.
 */
import { resolve } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { answerSchema, describeAnswer, exampleAnswer } from '../directive/answer-spec.js';
import type { RunRecord } from '../engine/run-record.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { ItemKind } from '../items/item-kind.js';
import type { SpaceName } from '../items/space.js';
import type { Dirigent } from '../operations/dirigent.js';
import type { Executed } from '../operations/item-operations.js';
import type { LoadedItem } from '../operations/load-item.js';
import type { SignedBatch, SignedItem } from '../items/sign-items.js';
import type { SearchPage } from '../search/search-page.js';
import type { SearchSort } from '../search/search-request.js';
import { ITEM_TOOLS, type ItemToolSchema } from './item-tool-schemas.js';

type Args = Record<string, unknown>;

const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true });
const validators = new Map<string, ValidateFunction>(
  ITEM_TOOLS.map((t) => [t.name, ajv.compile(t.inputSchema)]),
);

/** Who calls, and so what a call may do. */
export interface ItemToolAccess {
  /**
   * Whether the caller may also run tools directly, copy items between spaces and sign them
   * (default true: the person or agent on this machine). Clients of a network server get this
   * only when it was started with `--full-access`; without it they search, load, read
   * knowledge, check, and run and answer directives, as the HTTP API lets them.
   */
  fullAccess?: boolean;
}

/**
 * Calls tool `name` with `args` on `dirigent`; resolves with its JSON answer, or rejects with a
 * `DirigentError` (`INVALID_REQUEST` for arguments the schema refuses or an unknown tool,
 * `PERMISSION_DENIED` for what `access` does not allow).
 */
export async function callItemTool(
  dirigent: Dirigent,
  name: string,
  args: Args = {},
  access: ItemToolAccess = {},
): Promise<Args> {
  const validate = validators.get(name);
  if (validate === undefined)
    throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, `There is no tool "${name}".`, {
      hint: `The tools are ${ITEM_TOOLS.map((t) => t.name).join(', ')}.`,
    });
  const given = structuredClone(args);
  if (!validate(given)) {
    const problems = (validate.errors ?? []).map(
      (e) =>
        `${e.instancePath === '' ? 'arguments' : e.instancePath.slice(1)} ${e.message ?? 'is invalid'}`,
    );
    throw DirigentError.fatal(
      ErrorCode.INVALID_REQUEST,
      `Invalid arguments for ${name}: ${problems.join('; ')}.`,
      { hint: usage(ITEM_TOOLS.find((t) => t.name === name)!), details: { problems } },
    );
  }
  checkProject(dirigent, given.project_path);
  if (access.fullAccess === false) checkAccess(name, given);
  switch (name as ItemToolSchema['name']) {
    case 'search':
      return found(
        await dirigent.items.search({
          ...(given.query !== undefined && { query: given.query as string }),
          ...(given.item_type !== 'all' && { kinds: [given.item_type as ItemKind] }),
          ...(given.source !== 'all' && { spaces: [given.source as SpaceName] }),
          ...(given.category !== undefined && { category: given.category as string }),
          ...(given.tags !== undefined && { tags: given.tags as string[] }),
          ...(given.version !== undefined && { version: given.version as string }),
          ...(given.date_from !== undefined && { dateFrom: given.date_from as string }),
          ...(given.date_to !== undefined && { dateTo: given.date_to as string }),
          sort: given.sort_by as SearchSort,
          limit: given.limit as number,
          offset: given.offset as number,
        }),
      );
    case 'sign':
      return signed(
        await dirigent.items.sign({
          kind: given.item_type as ItemKind,
          itemId: given.item_id as string,
          space: given.source as SpaceName,
        }),
      );
    case 'load':
      return loaded(
        await dirigent.items.load({
          kind: given.item_type as ItemKind,
          itemId: given.item_id as string,
          ...(given.source !== undefined && { source: given.source as SpaceName }),
          ...(given.destination !== undefined && { destination: given.destination as SpaceName }),
        }),
      );
    case 'execute':
      return executed(
        await dirigent.items.execute({
          kind: given.item_type as ItemKind,
          itemId: given.item_id as string,
          parameters: given.parameters as Args,
          dryRun: given.dry_run === true,
          wait: given.async !== true,
          trigger: 'mcp',
          ...(given.run_id !== undefined && {
            resume: {
              runId: given.run_id as string,
              answer: given.answer,
              ...(given.signal !== undefined && { signal: given.signal as string }),
            },
          }),
        }),
      );
  }
}

/** The server serves one project: a `project_path` naming another is refused. */
function checkProject(dirigent: Dirigent, path: unknown): void {
  if (path === undefined || resolve(dirigent.projectDir, String(path)) === dirigent.projectDir)
    return;
  throw DirigentError.fatal(
    ErrorCode.INVALID_REQUEST,
    `This server serves the project ${dirigent.projectDir}, not ${String(path)}.`,
    {
      hint: 'Omit project_path, or start a server for that project (dirigent mcp --project <dir>).',
    },
  );
}

/** Refuses what only full access allows: running a tool directly, copying, signing. */
function checkAccess(name: string, args: Args): void {
  const what =
    name === 'sign'
      ? 'sign items'
      : name === 'load' && args.destination !== undefined
        ? 'copy items between spaces'
        : name === 'execute' && args.item_type === 'tool' && args.dry_run !== true
          ? 'run tools directly (directives may run them)'
          : undefined;
  if (what === undefined) return;
  throw DirigentError.fatal(
    ErrorCode.PERMISSION_DENIED,
    `Clients of this server may not ${what}.`,
    {
      hint: 'Start the server with --full-access to let its clients run tools directly, copy and sign items.',
    },
  );
}

function usage(tool: ItemToolSchema): string {
  const required = tool.inputSchema.required ?? [];
  const optional = Object.keys(tool.inputSchema.properties).filter((k) => !required.includes(k));
  return `${tool.name} takes ${required.length > 0 ? `${required.join(', ')} (required)` : ''}${required.length > 0 && optional.length > 0 ? ' and ' : ''}${optional.join(', ')}.`;
}

function found(page: SearchPage): Args {
  return {
    status: 'success',
    query: page.query,
    total: page.total,
    limit: page.limit,
    offset: page.offset,
    results: page.results.map((hit) => ({
      item_id: hit.itemId,
      item_type: hit.kind,
      space: hit.space,
      name: hit.name,
      ...(hit.title !== undefined && { title: hit.title }),
      ...(hit.description !== undefined && { description: hit.description }),
      ...(hit.category !== undefined && { category: hit.category }),
      ...(hit.version !== undefined && { version: hit.version }),
      tags: hit.tags,
      score: Math.round(hit.score * 1000) / 1000,
      signature: hit.signature,
      shadowed: hit.shadowed,
      ...(hit.shadowedBy !== undefined && { shadowed_by: hit.shadowedBy }),
      ...(hit.modifiedAt > 0 && { modified_at: new Date(hit.modifiedAt).toISOString() }),
    })),
  };
}

function signed(outcome: SignedItem | SignedBatch): Args {
  const one = (item: SignedItem): Args => ({
    item_id: item.itemId,
    space: item.space,
    path: item.file,
    signature: {
      timestamp: item.signature.timestamp,
      hash: item.signature.hash,
      key_id: item.signature.keyId,
      format: item.signature.format,
    },
    ...(item.warnings.length > 0 && { warnings: item.warnings }),
  });
  if (outcome.status === 'signed') return { status: 'signed', ...one(outcome) };
  return {
    status: outcome.failed.length === 0 ? 'signed' : 'partial',
    total: outcome.total,
    signed: outcome.items.map(one),
    failed: outcome.failed.map((f) => ({
      item_id: f.itemId,
      error: f.error,
      ...(f.issues !== undefined && { issues: f.issues }),
    })),
  };
}

function loaded(item: LoadedItem): Args {
  return {
    status: 'success',
    item_type: item.kind,
    item_id: item.itemId,
    space: item.space,
    ...(item.file !== '' && { path: item.file }),
    metadata: item.metadata,
    signature: item.signature,
    content: item.content,
    ...(item.warnings.length > 0 && { warnings: item.warnings }),
    ...(item.copiedTo && {
      copied_to: item.copiedTo.space,
      destination_path: item.copiedTo.file,
    }),
  };
}

function executed(done: Executed): Args {
  switch (done.kind) {
    case 'knowledge':
      return {
        status: 'success',
        type: 'knowledge',
        item_id: done.itemId,
        space: done.space,
        data: done.metadata,
        content: done.content,
        instructions: 'Use this knowledge to inform your decisions.',
      };
    case 'tool':
      return done.dryRun
        ? {
            status: 'valid',
            type: 'tool',
            item_id: done.itemId,
            params: done.params,
            chain: done.chain,
          }
        : {
            status: 'success',
            type: 'tool',
            item_id: done.itemId,
            result: done.result,
            metadata: { duration_ms: done.durationMs },
          };
    case 'directive':
      return done.dryRun
        ? { status: 'valid', type: 'directive', item_id: done.itemId, inputs: done.inputs }
        : directiveRun(done.itemId, done.run);
  }
}

function directiveRun(itemId: string, run: RunRecord): Args {
  const waiting = (run.waiting ?? []).map((w) => ({
    step: w.step,
    signal: w.signal,
    ...(w.text !== undefined && { instruction: w.text }),
    ...(w.answer !== undefined && { answer_schema: answerSchema(w.answer) }),
    ...(w.deadline !== undefined && { deadline: new Date(w.deadline).toISOString() }),
  }));
  const typed = (run.waiting ?? []).flatMap((w) =>
    w.answer === undefined
      ? []
      : [
          `${waiting.length > 1 ? `"${w.signal}" ` : ''}answer is ${describeAnswer(w.answer)}, e.g. ${JSON.stringify(exampleAnswer(w.answer))}`,
        ],
  );
  return {
    status: run.status,
    type: 'directive',
    item_id: itemId,
    run_id: run.runId,
    ...(run.outputs !== null && { outputs: run.outputs }),
    ...(run.error !== null && { error: run.error }),
    steps: run.steps.map((s) => ({
      name: s.name,
      status: s.status,
      ...(s.error && { error: s.error }),
    })),
    ...(waiting.length > 0 && {
      waiting,
      next: `Do what ${waiting.length === 1 ? 'the instruction asks' : 'the instructions ask'}, then call execute with item_type "directive", item_id "${itemId}", run_id "${run.runId}" and your answer${waiting.length > 1 ? ' (and signal, to say which step it answers)' : ''}.${typed.length > 0 ? ` The ${typed.join('; the ')} (answer_schema is its JSON Schema; an answer that does not match is refused with INVALID_PAYLOAD and the run waits on).` : ''}`,
    }),
  };
}
