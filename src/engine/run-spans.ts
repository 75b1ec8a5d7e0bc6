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
import { DirigentMetrics } from '../telemetry/dirigent-metrics.js';
import { formatTraceparent, stepSpanId, type RunTrace } from '../telemetry/run-trace.js';
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

/** The spans and metrics of one run (see the module comment). */
export class RunSpans {
  /** When each step's attempt under way began in this process. */
  private readonly begun = new Map<string, number>();
  private readonly base: Attributes;

  constructor(
    private readonly t: Telemetry,
    readonly trace: RunTrace,
    private readonly run: TracedRun,
  ) {
    this.base = {
      [Attr.DIRECTIVE_ID]: run.record.directive,
      [Attr.RUN_ID]: run.runId,
    };
  }

  /** The run's own span, as a parent. */
  get runSpan(): SpanParent {
    return { traceId: this.trace.traceId, spanId: this.trace.spanId, sampled: this.trace.sampled };
  }

  /** The span of a step's attempt, as a parent (of its tool calls, of a child run). */
  attemptSpan(node: string, attempt: number): SpanParent {
    return {
      traceId: this.trace.traceId,
      spanId: stepSpanId(this.run.runId, node, this.run.steps[node]?.seq ?? 0, attempt),
      sampled: this.trace.sampled,
    };
  }

  /** The `traceparent` a step's tool call carries: its attempt's span. */
  traceparent(node: string, attempt: number): string {
    const p = this.attemptSpan(node, attempt);
    return formatTraceparent(p.traceId, p.spanId, p.sampled);
  }

  /** A new run started (not a resumed one). */
  started(): void {
    this.t.metrics?.runStarted.add(1, this.metricAttributes());
  }

  /** A step's attempt begins here. */
  attemptBegun(node: string): void {
    this.begun.set(node, Date.now());
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
    const begun = this.begun.get(node);
    this.begun.delete(node);
    const resumed = begun === undefined && !(attempt === 1 && rec?.startedAt);
    const startTime = begun ?? (attempt === 1 && rec?.startedAt ? rec.startedAt : now);
    // A compensation (`compensate:NAME`) is told like a step of kind `compensate`, under the run.
    const undone = node.startsWith(COMPENSATE_PREFIX)
      ? this.run.node(node.slice(COMPENSATE_PREFIX.length))
      : undefined;
    const cn = undone ?? this.run.node(node);
    const kind = undone ? 'compensate' : stepKind(cn);
    const attributes: Attributes = {
      ...this.base,
      [Attr.STEP_NAME]: node,
      [Attr.STEP_KIND]: kind,
      [Attr.STEP_ATTEMPT]: attempt,
      [Attr.STEP_OUTCOME]: outcome,
    };
    const action =
      cn.node.kind !== 'step' ? undefined : undone ? cn.node.compensate?.execute : cn.node.action;
    if (action?.type === 'execute' && action.itemType === 'tool')
      attributes[Attr.TOOL_ID] = action.itemId;
    if (action?.type === 'foreach') attributes[Attr.TOOL_ID] = action.execute.itemId;
    if (action?.type === 'wait' || action?.type === 'instruction')
      attributes[Attr.STEP_SIGNAL] = action.signal;
    if (retryDelayMs !== undefined) attributes[Attr.STEP_RETRY_DELAY_MS] = retryDelayMs;
    if (resumed) attributes[Attr.STEP_RESUMED] = true;
    const own = this.attemptSpan(node, attempt);
    this.t.record({
      name: `step ${node}`,
      traceId: own.traceId,
      spanId: own.spanId,
      parent: undone ? this.runSpan : this.parentOf(cn),
      startTime,
      endTime: now,
      attributes,
      error: error ?? undefined,
    });
    const m = this.t.metrics;
    if (m === undefined) return;
    const directive = this.run.record.directive;
    DirigentMetrics.ms(m.stepDuration, now - startTime, {
      [Attr.DIRECTIVE_ID]: directive,
      [Attr.STEP_KIND]: kind,
      [Attr.STEP_OUTCOME]: outcome,
    });
    m.stepAttempts.add(1, {
      [Attr.DIRECTIVE_ID]: directive,
      [Attr.STEP_NAME]: node,
      [Attr.STEP_OUTCOME]: outcome,
      ...(error && { [Attr.ERROR_TYPE]: error.code }),
    });
  }

  /** The run ended: its span and metrics. */
  ended(inputs: unknown): void {
    const record = this.run.record;
    const endedAt = record.endedAt ?? Date.now();
    const attributes: Attributes = {
      ...this.base,
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
    const m = this.t.metrics;
    if (m === undefined) return;
    const labels = { ...this.metricAttributes(), [Attr.RUN_STATUS]: record.status };
    DirigentMetrics.ms(m.runDuration, endedAt - record.startedAt, labels);
    m.runEnded.add(1, {
      ...labels,
      ...(record.error && { [Attr.ERROR_TYPE]: record.error.code }),
    });
  }

  /** The parent of a step's span: its parallel block's, or the run's. */
  private parentOf(cn: CompiledNode): SpanParent {
    return cn.parallel === null ? this.runSpan : this.attemptSpan(cn.parallel, 1);
  }

  private metricAttributes(): Attributes {
    return {
      [Attr.DIRECTIVE_ID]: this.run.record.directive,
      [Attr.RUN_TRIGGER]: this.trace.trigger,
    };
  }
}

/** The `dirigent.step.kind` of a node (a compensation's is `compensate`). */
export function stepKind(cn: CompiledNode): string {
  if (cn.node.kind === 'parallel') return 'parallel';
  const action = cn.node.action;
  if (action.type === 'execute') return action.itemType;
  return action.type;
}
