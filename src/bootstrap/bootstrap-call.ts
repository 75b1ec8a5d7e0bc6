import type { ToolCall } from '../tools/tool-call.js';
import type { BootstrapContext } from './bootstrap-context.js';
import type { BootstrapTool } from './bootstrap-tool.js';

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
