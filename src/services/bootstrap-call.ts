import type { ToolCall } from '../tools/tool-call.js';
import type { BootstrapContext } from './bootstrap-context.js';
import type { BootstrapTool } from './bootstrap-tool.js';
import { cancelled } from '../errors/stop-errors.js';

/**
 * The call that starts a bootstrap tool, as a tool job would make it: its declared `input` as the
 * parameters (a fresh copy: validation fills defaults in place), run id `bootstrap`, the tool's
 * item id as the step, `attempt` counting the starts of this worker.
 */
export function bootstrapCall(
  ctx: BootstrapContext,
  tool: BootstrapTool,
  attempt: number,
  signal: AbortSignal,
): ToolCall {
  return {
    itemId: tool.itemId,
    params: structuredClone(tool.spec.input),
    projectDir: ctx.projectDir,
    runId: 'bootstrap',
    step: tool.itemId,
    attempt,
    signal,
  };
}

/**
 * Runs a bootstrap tool once through the context's dispatcher; the call is stopped (its work
 * killed) when the worker drains (`ctx.stopping`) or the lease it runs under is lost.
 */
export async function callBootstrapTool(
  ctx: BootstrapContext,
  tool: BootstrapTool,
  attempt: number,
  lost: AbortSignal,
): Promise<unknown> {
  const controller = new AbortController();
  const stop = () =>
    controller.abort(
      lost.aborted
        ? lost.reason
        : cancelled(`Bootstrap tool "${tool.itemId}"`, 'the worker is draining'),
    );
  ctx.stopping.addEventListener('abort', stop, { once: true });
  lost.addEventListener('abort', stop, { once: true });
  if (ctx.stopping.aborted || lost.aborted) stop();
  try {
    return await ctx.dispatch(bootstrapCall(ctx, tool, attempt, controller.signal));
  } finally {
    ctx.stopping.removeEventListener('abort', stop);
    lost.removeEventListener('abort', stop);
  }
}
