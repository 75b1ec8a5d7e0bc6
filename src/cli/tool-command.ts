import { processTelemetry } from '../telemetry/process-telemetry.js';
import { resolve } from 'node:path';
import { formatDiagnostic } from '../directive/diagnostics.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { ItemResolver } from '../items/item-resolver.js';
import { defaultSpaces } from '../items/space.js';
import { ItemDispatcher } from '../tools/item-dispatcher.js';
import type { ToolDescription } from '../tools/tool-dispatcher.js';
import { parseJsonOption } from './parse-inputs.js';
import { diagnosticsOf } from '../directive/diagnostics.js';
import { cancelled } from '../errors/stop-errors.js';

/** Errors that mean the call itself is wrong (exit 2), not that the tool failed (exit 1). */
export const INVALID_CALL: readonly string[] = [
  ErrorCode.INVALID_TOOL,
  ErrorCode.UNKNOWN_TOOL,
  ErrorCode.INVALID_PARAMS,
  ErrorCode.INVALID_ITEM_ID,
  ErrorCode.INVALID_INPUTS,
  ErrorCode.EXECUTOR_NOT_FOUND,
  ErrorCode.CHAIN_CYCLE,
  ErrorCode.CHAIN_TOO_DEEP,
  ErrorCode.CHAIN_UPWARD,
  ErrorCode.UNKNOWN_PRIMITIVE,
  ErrorCode.MISSING_SECRET,
  ErrorCode.TOOL_DISABLED,
  ErrorCode.UNSIGNED_ITEM,
  ErrorCode.INTEGRITY_FAILED,
  ErrorCode.UNTRUSTED_KEY,
  ErrorCode.BAD_SIGNATURE,
  ErrorCode.PARTIAL_SIGNATURE,
  // A parameter's value the built-in tools refuse as it is, whatever the files say.
  ErrorCode.INVALID_PATTERN,
  ErrorCode.UNSAFE_VALUE,
  ErrorCode.PATH_OUTSIDE_PROJECT,
];

/**
 * `dirigent tool run <item_id> --params <json>`: runs one tool directly and prints its result.
 * Exit status: 0 success, 1 the tool failed, 2 the call is invalid (unknown tool, bad params).
 */
export async function toolRunCommand(
  itemId: string,
  opts: { params?: string; project: string; json?: boolean },
): Promise<number> {
  const controller = new AbortController();
  const onSigint = () =>
    controller.abort(cancelled('The call', 'interrupted from the terminal (SIGINT)'));
  process.once('SIGINT', onSigint);
  let dispatcher: ItemDispatcher | undefined;
  try {
    const params = parseJsonOption(opts.params, '--params') ?? {};
    const resolver = new ItemResolver(defaultSpaces(resolve(opts.project)));
    const telemetry = processTelemetry();
    dispatcher = new ItemDispatcher(resolver, { ...(telemetry && { telemetry }) });
    const result = await dispatcher.dispatch({
      itemId,
      params,
      projectDir: resolve(opts.project),
      runId: 'cli',
      step: 'tool',
      attempt: 1,
      signal: controller.signal,
    });
    process.stdout.write(
      `${JSON.stringify(opts.json ? { ok: true, result } : result, null, opts.json ? undefined : 2)}\n`,
    );
    return 0;
  } catch (err) {
    const e = reportToolError(err, opts);
    return INVALID_CALL.includes(e.code) ? 2 : 1;
  } finally {
    process.off('SIGINT', onSigint);
    await dispatcher?.close();
  }
}

/**
 * `dirigent tool show <item_id>`: the file that won, the files it shadows, and the executor chain
 * with each link's space; for a built-in tool (which has no file), its description and parameters.
 * Exit 0, or 2 when the tool or its chain is broken.
 */
export async function toolShowCommand(
  itemId: string,
  opts: { project: string; json?: boolean },
): Promise<number> {
  const projectDir = resolve(opts.project);
  const resolver = new ItemResolver(defaultSpaces(projectDir));
  const dispatcher = new ItemDispatcher(resolver);
  try {
    if (dispatcher.isBuiltin(itemId)) showBuiltin(dispatcher.describe(itemId)!, opts);
    else {
      const resolution = await resolver.resolve('tool', itemId);
      const chain = await dispatcher.chainOf(itemId, projectDir);
      const links = chain.map((l) => ({
        itemId: l.itemId,
        space: l.space,
        file: l.file,
        toolType: l.item.toolType,
      }));
      if (opts.json) {
        process.stdout.write(
          `${JSON.stringify({ ok: true, itemId, builtin: false, file: resolution.file, space: resolution.space, shadowed: resolution.shadowed, chain: links })}\n`,
        );
      } else {
        const lines = [`${itemId}: ${resolution.file} (${resolution.space} space)`];
        for (const s of resolution.shadowed) lines.push(`  shadows ${s.file} (${s.space} space)`);
        lines.push('chain:');
        for (const l of links) lines.push(`  ${l.itemId} [${l.toolType}, ${l.space}] ${l.file}`);
        process.stdout.write(`${lines.join('\n')}\n`);
      }
    }
    return 0;
  } catch (err) {
    reportToolError(err, opts);
    return 2;
  } finally {
    await dispatcher.close();
    resolver.close();
  }
}

/** Prints a built-in tool: it runs in the worker's process, so it has no file and no chain. */
function showBuiltin(tool: ToolDescription, opts: { json?: boolean }): void {
  const { itemId, description, paramsSchema, retry } = tool;
  if (opts.json) {
    process.stdout.write(
      `${JSON.stringify({ ok: true, itemId, builtin: true, description, params: paramsSchema, retry, chain: [] })}\n`,
    );
    return;
  }
  const schema = paramsSchema as {
    properties?: Record<string, { type?: unknown; description?: string }>;
    required?: string[];
  };
  const required = new Set(schema.required ?? []);
  const lines = [
    `${itemId}: built in (runs in the worker's process; no file, no chain)`,
    description,
  ];
  const params = Object.entries(schema.properties ?? {});
  if (params.length > 0) lines.push('params:');
  for (const [name, p] of params) {
    const type = Array.isArray(p.type) ? p.type.join(' | ') : String(p.type ?? 'any');
    const what = p.description === undefined ? '' : `  ${p.description}`;
    lines.push(`  ${name}${required.has(name) ? '' : '?'}: ${type}${what}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Prints why a tool command failed (`{ok: false, error}` with `--json`) and returns the error. */
export function reportToolError(err: unknown, opts: { json?: boolean }): DirigentError {
  const e = DirigentError.from(err);
  if (opts.json) process.stdout.write(`${JSON.stringify({ ok: false, error: e.toJSON() })}\n`);
  else for (const d of diagnosticsOf(e)) process.stderr.write(`${formatDiagnostic(d)}\n`);
  return e;
}
