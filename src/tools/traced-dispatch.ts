/**
 * A tool call's telemetry: its duration and outcome as metrics, and its span. When a span stands
 * for the call already (a step attempt's, a tool job's), what the call's span would say goes there
 * (`ToolCall.spanAttributes`); else the call has one of its own, `runtime <primitive>` (the
 * built-ins: `runtime builtin`), child of the span the call carries (a foreach item's step
 * attempt; none for a `dirigent tool` call), which the call goes on with as its `traceparent`, so
 * a tool's process gets it as `TRACEPARENT`. A call in a trace that is not sampled has no span at
 * all.
 */
import type { Attributes, Span } from '@opentelemetry/api';
import { DirigentError } from '../errors/dirigent-error.js';
import type { ChainLink } from '../items/tool-item.js';
import { Attr } from '../telemetry/attributes.js';
import { failureOutcome } from '../telemetry/failure-outcome.js';
import {
  parentOf,
  SPAN_KIND,
  SPAN_STATUS,
  type SpanParent,
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
 * Runs `run` under the call's span (see the module comment). `runtime` names what runs the call
 * (a built-in's is known at once); asked first, its failure (an unknown tool, a broken chain) is
 * the call's.
 */
export async function tracedDispatch<T>(
  t: Telemetry,
  call: ToolCall,
  runtime: CallRuntime | (() => Promise<CallRuntime>),
  run: (call: ToolCall) => Promise<T>,
): Promise<T> {
  const started = Date.now();
  const span = new CallSpan(t, call, started);
  let outcome = 'completed';
  let error: DirigentError | undefined;
  try {
    const r = typeof runtime === 'function' ? await runtime() : runtime;
    span.say(Attr.RUNTIME_ID, r.runtime);
    span.say(Attr.RUNTIME_PRIMITIVE, r.primitive);
    if (span.saying) span.say(Attr.TOOL_PARAMS, t.valueAttribute(call.params));
    const traceparent = span.start(r.primitive);
    const result = await run(traceparent === undefined ? call : { ...call, traceparent });
    span.say(Attr.PROCESS_EXIT_CODE, exitCodeOf(result));
    if (span.saying) span.say(Attr.TOOL_RESULT, t.valueAttribute(result));
    return result;
  } catch (err) {
    error = DirigentError.from(err);
    outcome = failureOutcome(error);
    span.say(Attr.PROCESS_EXIT_CODE, exitCodeOf(error.details));
    span.failed(error);
    throw err;
  } finally {
    const ended = Date.now();
    span.end(outcome, error === undefined, ended);
    t.metrics?.toolCallEnded(call.itemId, outcome, ended - started, error?.code);
  }
}

/**
 * What a call's span says: its own span's attributes (the span itself once started, from the
 * call's start), or the step attempt's (`ToolCall.spanAttributes`), or nothing.
 */
class CallSpan {
  /** The attributes of the call's own span until it starts; undefined when it has none. */
  private readonly own: Attributes | undefined;
  /** The step attempt's attributes, when its span stands for the call. */
  private readonly folded: Attributes | undefined;
  private readonly parent: SpanParent | undefined;
  private span: Span | undefined;

  constructor(
    private readonly t: Telemetry,
    call: ToolCall,
    private readonly started: number,
  ) {
    this.folded = call.spanAttributes;
    if (this.folded !== undefined || t.tracer === undefined) return;
    this.parent = parentOf(call.traceparent);
    if (this.parent?.sampled === false) return;
    this.own = {
      [Attr.TOOL_ID]: call.itemId,
      [Attr.RUN_ID]: call.runId,
      [Attr.STEP_NAME]: call.step,
      [Attr.STEP_ATTEMPT]: call.attempt,
    };
    if (call.callId !== undefined) this.own[Attr.TOOL_CALL_ID] = call.callId;
  }

  /** Whether anything is said (a span of the call's own, or the attempt's). */
  get saying(): boolean {
    return this.own !== undefined || this.folded !== undefined;
  }

  /** Says `value` (nothing when undefined) as `key`. */
  say(key: string, value: string | number | undefined): void {
    if (value === undefined) return;
    if (this.span !== undefined) this.span.setAttribute(key, value);
    else {
      const into = this.own ?? this.folded;
      if (into !== undefined) into[key] = value;
    }
  }

  /** Starts the call's own span, if it has one, and returns its `traceparent`. */
  start(primitive: string | undefined): string | undefined {
    if (this.own === undefined) return undefined;
    this.span = this.t.startSpan(
      primitive === undefined ? 'runtime' : `runtime ${primitive}`,
      { kind: SPAN_KIND.INTERNAL, startTime: this.started, attributes: this.own },
      this.parent,
    );
    return traceparentOf(this.span);
  }

  /** The call failed: its own span (started now if the runtime was never known) says so. */
  failed(error: DirigentError): void {
    if (this.own === undefined) return;
    if (this.span === undefined) this.start(undefined);
    this.t.setError(this.span!, error);
  }

  /** The call ended at `ended` with `outcome`, `ok` or failed. */
  end(outcome: string, ok: boolean, ended: number): void {
    this.say(Attr.TOOL_OUTCOME, outcome);
    if (this.span === undefined) return;
    if (ok) this.span.setStatus({ code: SPAN_STATUS.OK });
    this.span.end(ended);
  }
}

/** The exit code a result or an error's details report (`exit_code`, RYE's `return_code`). */
function exitCodeOf(value: unknown): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as { exit_code?: unknown; return_code?: unknown };
  const code = v.exit_code ?? v.return_code;
  return typeof code === 'number' ? code : undefined;
}
