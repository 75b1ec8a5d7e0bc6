import type { ToolCall, ToolGate } from '../tools/tool-call.js';

/** What a tool job carries: everything a worker needs to run the call, and nothing else. */
export interface ToolJobData {
  itemId: string;
  params: Record<string, unknown>;
  projectDir: string;
  runId: string;
  step: string;
  attempt: number;
  callId?: string;
  /** The {@link ResultInbox} the outcome goes to. */
  replyTo?: string;
  /** The step's lock and rate limit, keys rendered. */
  gate?: ToolGate;
  /** Times the job was deferred for its lock or rate, and when that first happened. */
  deferrals?: number;
  firstDeferredAt?: number;
}

/**
 * The job id of a call: deterministic when the engine gave a call id, so that a resumed run
 * that makes the call again finds the job (and its result) instead of running the tool twice.
 */
export function toolJobId(call: ToolCall, fallback: () => string): string {
  return `${call.runId}.${call.callId ?? fallback()}`.replaceAll(':', '_');
}

/** The job's data for a call. */
export function toolJobData(call: ToolCall): ToolJobData {
  return {
    itemId: call.itemId,
    params: call.params,
    projectDir: call.projectDir,
    runId: call.runId,
    step: call.step,
    attempt: call.attempt,
    ...(call.callId !== undefined && { callId: call.callId }),
    ...(call.gate !== undefined && { gate: call.gate }),
  };
}
