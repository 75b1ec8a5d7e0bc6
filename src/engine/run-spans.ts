/**
 * A run's telemetry: its span, its step attempts' spans and their metrics (see
 * `telemetry/run-trace.ts` for why every id is derived from the run). Each part is recorded where
 * it ends, with the time it began: an attempt begun in this process has its start here; one begun
 * by a process that stopped starts at its step's start (attempt 1) or where this one took it over.
 */
import type { Attributes } from '@opentelemetry/api';
import type { CompiledNode } from '../compiler/compiled-directive.js';
import type { StepRecord } from '../compiler/run-context.js';
import type { Directive } from '../directive/ast.js';
import { COMPENSATE_PREFIX } from '../directive/process-node.js';
import type { SerializedError } from '../errors/dirigent-error.js';
import { Attr } from '../telemetry/attributes.js';
import { formatTraceparent, stepSpanIdsOf, type RunTrace } from '../telemetry/run-trace.js';
import type { SpanParent, Telemetry } from '../telemetry/telemetry.js';
import type { RunRecord } from './run-record.js';

/** How a step attempt ended. */
export type AttemptOutcome =
  | 'completed'
  | 'failed'
  | 'skipped'
  | 'retried'
  | 'timed_out'
  | 'cancelled';

/** What {@link RunSpans} reads of its run. */
export interface TracedRun {
  readonly runId: string;
  readonly record: RunRecord;
  readonly steps: Record<string, StepRecord>;
  readonly directive: Directive;
  readonly lineage: { depth: number; parentRunId: string | null };
  node(name: string): CompiledNode;
}

/** A step's attempt under way in this process, as its span will tell it. */
interface OpenAttempt {
  /** When it began here; undefined when it began in a process that stopped. */
  begun?: number;
  /** The attempt whose span id and call are below. */
  attempt?: number;
  spanId?: string;
  /** What its call said, for its span (see `ToolCall.spanAttributes`). */
  call?: Attributes;
}

/** What a step's tool call carries of its attempt's span (see {@link RunSpans.callTrace}). */
export interface CallTrace {
  traceparent: string;
  spanAttributes?: Attributes;
}

/** The spans and metrics of one run (see the module comment). */
export class RunSpans {
  /** Each step's attempt under way here, by step. */
  private readonly open = new Map<string, OpenAttempt>();
  /** The run's own span as a parent: one object, whose context the telemetry makes once. */
  readonly runSpan: SpanParent;
  /** Whether this run's spans are recorded (a tracer, and a sampled trace). */
  private readonly recording: boolean;
  private readonly stepSpanId: (step: string, seq: number, attempt: number) => string;

  constructor(
    private readonly t: Telemetry,
    readonly trace: RunTrace,
    private readonly run: TracedRun,
  ) {
    this.runSpan = { traceId: trace.traceId, spanId: trace.spanId, sampled: trace.sampled };
    this.recording = t.tracer !== undefined && trace.sampled;
    this.stepSpanId = stepSpanIdsOf(run.runId);
  }

  /** The span of a step's attempt, as a parent (of its tool calls, of a child run). */
  attemptSpan(node: string, attempt: number): SpanParent {
    return {
      traceId: this.trace.traceId,
      spanId: this.spanIdOf(node, attempt),
      sampled: this.trace.sampled,
    };
  }

  /**
   * What a step's tool call carries: the `traceparent` of its attempt's span and, for the step's
   * own call (`own`: not a foreach item's) in a recorded trace, the attributes its dispatcher
   * fills for that span, which stands for the call too (`ToolCall.spanAttributes`); nothing when
   * no spans are recorded at all (metrics only).
   */
  callTrace(node: string, attempt: number, own: boolean): CallTrace | undefined {
    // Without a tracer nothing records a trace: a tool's spans would name a parent never sent.
    if (this.t.tracer === undefined) return undefined;
    const traceparent = formatTraceparent(
      this.trace.traceId,
      this.spanIdOf(node, attempt),
      this.trace.sampled,
    );
    if (!own || !this.recording) return { traceparent };
    const open = this.open.get(node)!; // made by spanIdOf
    open.call = {};
    return { traceparent, spanAttributes: open.call };
  }

  /** A new run started (not a resumed one). */
  started(): void {
    this.t.metrics?.runStarted(this.run.record.directive, this.trace.trigger);
  }

  /** A step's attempt begins here. */
  attemptBegun(node: string): void {
    this.open.set(node, { begun: Date.now() });
  }

  /** A step's attempt ended: its span and metrics. */
  attemptEnded(
    node: string,
    attempt: number,
    outcome: AttemptOutcome,
    error?: SerializedError | null,
    retryDelayMs?: number,
  ): void {
    const rec = this.run.steps[node];
    const now = Date.now();
    const open = this.open.get(node);
    this.open.delete(node);
    const begun = open?.begun;
    const startTime = begun ?? (attempt === 1 && rec?.startedAt ? rec.startedAt : now);
    // A compensation (`compensate:NAME`) is told like a step of kind `compensate`, under the run.
    const undone = node.startsWith(COMPENSATE_PREFIX)
      ? this.run.node(node.slice(COMPENSATE_PREFIX.length))
      : undefined;
    const cn = undone ?? this.run.node(node);
    const kind = undone ? 'compensate' : stepKind(cn);
    if (this.recording) {
      const same = open?.attempt === attempt;
      // The call's own attributes, when its span is this one, and the attempt's beside them.
      const attributes: Attributes = (same && open.call) || {};
      attributes[Attr.DIRECTIVE_ID] = this.run.record.directive;
      attributes[Attr.RUN_ID] = this.run.runId;
      attributes[Attr.STEP_NAME] = node;
      attributes[Attr.STEP_KIND] = kind;
      attributes[Attr.STEP_ATTEMPT] = attempt;
      attributes[Attr.STEP_OUTCOME] = outcome;
      const action =
        cn.node.kind !== 'step' ? undefined : undone ? cn.node.compensate?.execute : cn.node.action;
      if (action?.type === 'execute' && action.itemType === 'tool')
        attributes[Attr.TOOL_ID] = action.itemId;
      if (action?.type === 'foreach') attributes[Attr.TOOL_ID] = action.execute.itemId;
      if (action?.type === 'wait' || action?.type === 'instruction')
        attributes[Attr.STEP_SIGNAL] = action.signal;
      if (retryDelayMs !== undefined) attributes[Attr.STEP_RETRY_DELAY_MS] = retryDelayMs;
      if (begun === undefined && !(attempt === 1 && rec?.startedAt))
        attributes[Attr.STEP_RESUMED] = true;
      this.t.record({
        name: `step ${node}`,
        traceId: this.trace.traceId,
        spanId: (same && open.spanId) || this.spanIdOf(node, attempt),
        parent: undone ? this.runSpan : this.parentOf(cn),
        startTime,
        endTime: now,
        attributes,
        error: error ?? undefined,
      });
    }
    this.t.metrics?.stepEnded(
      this.run.record.directive,
      node,
      kind,
      outcome,
      now - startTime,
      error?.code,
    );
  }

  /** The run ended: its span and metrics. */
  ended(inputs: unknown): void {
    const record = this.run.record;
    const endedAt = record.endedAt ?? Date.now();
    if (this.recording) {
      const attributes: Attributes = {
        [Attr.DIRECTIVE_ID]: record.directive,
        [Attr.RUN_ID]: this.run.runId,
        [Attr.DIRECTIVE_VERSION]: this.run.directive.version,
        [Attr.RUN_TRIGGER]: this.trace.trigger,
        [Attr.RUN_STATUS]: record.status,
        [Attr.RUN_DEPTH]: this.run.lineage.depth,
      };
      if (this.run.lineage.parentRunId !== null)
        attributes[Attr.RUN_PARENT_ID] = this.run.lineage.parentRunId;
      const ins = this.t.valueAttribute(inputs);
      if (ins !== undefined) attributes[Attr.RUN_INPUTS] = ins;
      const outs = record.outputs === null ? undefined : this.t.valueAttribute(record.outputs);
      if (outs !== undefined) attributes[Attr.RUN_OUTPUTS] = outs;
      const { traceId, spanId, parentSpanId, sampled } = this.trace;
      this.t.record({
        name: `run ${record.directive}`,
        traceId,
        spanId,
        parent: parentSpanId === undefined ? undefined : { traceId, spanId: parentSpanId, sampled },
        startTime: record.startedAt,
        endTime: endedAt,
        attributes,
        error: record.error ? { ...record.error, retryable: false } : undefined,
      });
    }
    this.t.metrics?.runEnded(
      record.directive,
      this.trace.trigger,
      record.status,
      endedAt - record.startedAt,
      record.error?.code,
    );
  }

  /**
   * The span id of a step's attempt, derived from the run (see the module comment); the attempt
   * under way here keeps it, for its calls and its end.
   */
  private spanIdOf(node: string, attempt: number): string {
    let open = this.open.get(node);
    if (open === undefined) this.open.set(node, (open = {}));
    if (open.attempt === attempt && open.spanId !== undefined) return open.spanId;
    const spanId = this.stepSpanId(node, this.run.steps[node]?.seq ?? 0, attempt);
    open.attempt = attempt;
    open.spanId = spanId;
    delete open.call;
    return spanId;
  }

  /** The parent of a step's span: its parallel block's, or the run's. */
  private parentOf(cn: CompiledNode): SpanParent {
    return cn.parallel === null ? this.runSpan : this.attemptSpan(cn.parallel, 1);
  }
}

/** The `dirigent.step.kind` of a node (a compensation's is `compensate`). */
export function stepKind(cn: CompiledNode): string {
  if (cn.node.kind === 'parallel') return 'parallel';
  const action = cn.node.action;
  if (action.type === 'execute') return action.itemType;
  return action.type;
}
