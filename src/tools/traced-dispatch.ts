/**
 * A tool call under its span, `runtime <primitive>` (the built-ins: `runtime builtin`), child of
 * the span the call carries (its step attempt's, or the tool job's on a worker), with the tool's
 * duration and outcome as metrics. The call goes on with its `traceparent` set to this span, so a
 * tool's process gets it as `TRACEPARENT`.
 */
import { DirigentError } from '../errors/dirigent-error.js';
import type { ChainLink } from '../items/tool-item.js';
import { Attr } from '../telemetry/attributes.js';
import { DirigentMetrics } from '../telemetry/dirigent-metrics.js';
import { failureOutcome } from '../telemetry/failure-outcome.js';
import {
  parentOf,
  SPAN_KIND,
  SPAN_STATUS,
  traceparentOf,
  type Telemetry,
} from '../telemetry/telemetry.js';
import type { ToolCall } from './tool-call.js';

/** What ran the call: the chain's runtime (its second link) and its primitive (the last). */
export interface CallRuntime {
  runtime: string;
  primitive: string;
}

/** The runtime and primitive of a chain, or of a built-in tool (`chain` undefined). */
export function runtimeOf(itemId: string, chain: readonly ChainLink[] | undefined): CallRuntime {
  if (chain === undefined || chain.length === 0) return { runtime: itemId, primitive: 'builtin' };
  const last = chain[chain.length - 1]!.itemId;
  return {
    runtime: chain.length > 1 ? chain[1]!.itemId : last,
    primitive: last.slice(last.lastIndexOf('/') + 1),
  };
}

/**
 * Runs `run` under the call's span. `runtime` names what runs the call; it is asked first, and
 * its failure (an unknown tool, a broken chain) is the call's.
 */
export async function tracedDispatch<T>(
  t: Telemetry,
  call: ToolCall,
  runtime: () => Promise<CallRuntime>,
  run: (call: ToolCall) => Promise<T>,
): Promise<T> {
  const started = Date.now();
  const span = t.tracer
    ? t.startSpan(
        'runtime',
        {
          kind: SPAN_KIND.INTERNAL,
          startTime: started,
          attributes: {
            [Attr.TOOL_ID]: call.itemId,
            [Attr.RUN_ID]: call.runId,
            [Attr.STEP_NAME]: call.step,
            [Attr.STEP_ATTEMPT]: call.attempt,
            ...(call.callId !== undefined && { [Attr.TOOL_CALL_ID]: call.callId }),
          },
        },
        parentOf(call.traceparent),
      )
    : undefined;
  let outcome = 'completed';
  let error: DirigentError | undefined;
  try {
    const r = await runtime();
    span?.updateName(`runtime ${r.primitive}`);
    span?.setAttribute(Attr.RUNTIME_ID, r.runtime);
    span?.setAttribute(Attr.RUNTIME_PRIMITIVE, r.primitive);
    const params = span && t.valueAttribute(call.params);
    if (params !== undefined) span?.setAttribute(Attr.TOOL_PARAMS, params);
    const result = await run(span ? { ...call, traceparent: traceparentOf(span) } : call);
    const exit = exitCodeOf(result);
    if (exit !== undefined) span?.setAttribute(Attr.PROCESS_EXIT_CODE, exit);
    const value = span && t.valueAttribute(result);
    if (value !== undefined) span?.setAttribute(Attr.TOOL_RESULT, value);
    return result;
  } catch (err) {
    error = DirigentError.from(err);
    outcome = failureOutcome(error);
    if (span !== undefined) {
      const exit = exitCodeOf(error.details);
      if (exit !== undefined) span.setAttribute(Attr.PROCESS_EXIT_CODE, exit);
      t.setError(span, error);
    }
    throw err;
  } finally {
    const ended = Date.now();
    if (span !== undefined) {
      span.setAttribute(Attr.TOOL_OUTCOME, outcome);
      if (error === undefined) span.setStatus({ code: SPAN_STATUS.OK });
      span.end(ended);
    }
    const m = t.metrics;
    if (m !== undefined) {
      const labels = { [Attr.TOOL_ID]: call.itemId, [Attr.TOOL_OUTCOME]: outcome };
      DirigentMetrics.ms(m.toolDuration, ended - started, labels);
      m.toolCalls.add(1, error ? { ...labels, [Attr.ERROR_TYPE]: error.code } : labels);
    }
  }
}

/** The exit code a result or an error's details report (`exit_code`, RYE's `return_code`). */
function exitCodeOf(value: unknown): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as { exit_code?: unknown; return_code?: unknown };
  const code = v.exit_code ?? v.return_code;
  return typeof code === 'number' ? code : undefined;
}
