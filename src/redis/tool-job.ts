import type { ToolCall } from '../tools/tool-call.js';

/**
 * What a tool job carries: the call without its signal, its hooks, the span attributes it fills
 * in process and the caller's project folder (a worker runs it in the project it serves), where
 * its outcome goes, and its deferrals.
 */
export type ToolJobData = Omit<
  ToolCall,
  'signal' | 'repeated' | 'projectDir' | 'inProcess' | 'spanAttributes'
> & {
  /** The {@link ResultInbox} the outcome goes to. */
  replyTo?: string;
  /** Times the job was deferred for its lock or rate, and when that first happened. */
  deferrals?: number;
  firstDeferredAt?: number;
};

/**
 * The job id of a call: deterministic when the engine gave a call id, so that a resumed run
 * that makes the call again finds the job (and its result) instead of running the tool twice.
 */
export function toolJobId(call: ToolCall, fallback: () => string): string {
  return `${call.runId}.${call.callId ?? fallback()}`.replaceAll(':', '_');
}

/** The job's data for a call. */
export function toolJobData({
  signal: _signal,
  repeated: _repeated,
  projectDir: _projectDir,
  inProcess: _inProcess,
  spanAttributes: _spanAttributes,
  ...data
}: ToolCall): ToolJobData {
  return data;
}
