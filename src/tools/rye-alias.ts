/** Building RYE's names of the native tools (see `rye-alias-tools.ts`). */
import { BuiltinDispatcher } from './builtin-dispatcher.js';
import { BUILTIN_TOOLS } from './builtin/index.js';
import type { ToolContext, ToolDefinition } from './tool-definition.js';
import type { ToolExample } from './tool-example.js';

let natives: BuiltinDispatcher | undefined;

/** Runs native tool `itemId` with `params` for the call `ctx` serves: its schema's checks and defaults apply. */
export function runNative(
  itemId: string,
  params: Record<string, unknown>,
  ctx: ToolContext,
): Promise<Record<string, unknown>> {
  natives ??= new BuiltinDispatcher(BUILTIN_TOOLS);
  return natives.dispatch({
    itemId,
    params,
    projectDir: ctx.projectDir,
    runId: ctx.runId,
    step: ctx.step,
    attempt: ctx.attempt,
    signal: ctx.signal,
    ...(ctx.traceparent !== undefined && { traceparent: ctx.traceparent }),
  }) as Promise<Record<string, unknown>>;
}

/**
 * The native tool's parameters, with RYE's (`add`) besides. With `add`, what the native schema
 * requires is left to the native call: RYE's extra modes (a batch of files) require other things.
 */
function schemaOf(nativeId: string, add?: Record<string, object>): object {
  const schema = BUILTIN_TOOLS.find((t) => t.itemId === nativeId)!.paramsSchema as {
    properties: object;
  };
  if (add === undefined) return schema;
  const loose: Record<string, unknown> = {
    ...schema,
    properties: { ...schema.properties, ...add },
  };
  delete loose.required;
  delete loose.anyOf;
  return loose;
}

/** `params` without the keys of `drop`, with `set` added where not given. */
export function withParams(
  params: Record<string, unknown>,
  drop: string[],
  set: Record<string, unknown> = {},
) {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) if (!drop.includes(k) && v !== undefined) out[k] = v;
  for (const [k, v] of Object.entries(set)) out[k] ??= v;
  return out;
}

/**
 * RYE's tool `itemId` over native `nativeId`: the native schema (with RYE's extra parameters
 * `add`), its own examples, and `execute`, which maps the call (see {@link runNative}).
 */
export function ryeAlias(
  itemId: string,
  nativeId: string,
  description: string,
  examples: ToolExample[],
  execute: ToolDefinition['execute'],
  add?: Record<string, object>,
): ToolDefinition {
  return {
    itemId,
    description: `${description} (RYE's name for ${nativeId})`,
    paramsSchema: schemaOf(nativeId, add),
    examples,
    execute,
  };
}
