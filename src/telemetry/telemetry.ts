/**
 * The telemetry a Dirigent process records into: a tracer and the metric instruments, made from
 * the providers it is given. Dirigent never starts an OpenTelemetry SDK of its own in library use;
 * the CLI and the worker start one from the `OTEL_*` variables (start-telemetry.ts). Without
 * providers there is no `Telemetry` at all, and the engine and workers skip every telemetry step.
 */
import { hostname } from 'node:os';
import { createRequire } from 'node:module';
import type {
  Attributes,
  Context,
  MeterProvider,
  Span,
  SpanKind,
  SpanOptions,
  SpanStatusCode,
  Tracer,
  TracerProvider,
} from '@opentelemetry/api';
import type { DirigentError, SerializedError } from '../errors/dirigent-error.js';
import { Attr } from './attributes.js';
import { DirigentMetrics } from './dirigent-metrics.js';
import { dirigentIdGenerator } from './pinned-id-generator.js';
import {
  formatTraceparent,
  parseTraceparent,
  runSpanId,
  traceIdOfRun,
  type RunTrace,
  type RunTrigger,
} from './run-trace.js';

/** What an engine, a worker or a runs client records telemetry into. */
export interface TelemetryOptions {
  /**
   * Where spans go; none are recorded without it. Build it with `idGenerator:
   * dirigentIdGenerator` (see pinned-id-generator.ts): a run's spans are recorded with ids derived
   * from the run, by whichever process ends each part.
   */
  tracerProvider?: TracerProvider;
  /** Where metrics go; none are recorded without it. */
  meterProvider?: MeterProvider;
  /**
   * Record run inputs and outputs and tool parameters and results on spans, as JSON (truncated
   * to 4 KiB). Default false. Declared secrets are `***` either way.
   */
  recordValues?: boolean;
}

/** A span's parent, by ids: a run's span or a step attempt's, recorded in any process. */
export interface SpanParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

/** A span recorded after the fact, with the ids and times of what it stands for. */
export interface RecordedSpan {
  name: string;
  /** The span's own id (and, for a root span, its trace id). */
  spanId: string;
  traceId: string;
  parent: SpanParent | undefined;
  kind?: SpanKind;
  startTime: number;
  endTime: number;
  attributes: Attributes;
  error?: SerializedError | DirigentError | undefined;
  events?: { name: string; time: number; attributes?: Attributes }[];
}

const NAME = 'dirigent';

/**
 * OpenTelemetry's API, loaded on first use: a process without telemetry never loads it (it costs
 * about 20 ms of start-up). It is a CommonJS package, so it can be required where it is needed.
 */
let api: typeof import('@opentelemetry/api') | undefined;
function otel(): typeof import('@opentelemetry/api') {
  api ??= createRequire(import.meta.url)(
    '@opentelemetry/api',
  ) as typeof import('@opentelemetry/api');
  return api;
}

/** Span kinds and status codes by value (OpenTelemetry's, fixed by its specification), usable without loading the API. */
export const SPAN_KIND = {
  INTERNAL: 0 as SpanKind,
  PRODUCER: 3 as SpanKind,
  CONSUMER: 4 as SpanKind,
};
export const SPAN_STATUS = { OK: 1 as SpanStatusCode, ERROR: 2 as SpanStatusCode };
const SAMPLED = 1;
const VALUE_LIMIT = 4096;

/** See the module comment. */
export class Telemetry {
  readonly tracer: Tracer | undefined;
  readonly metrics: DirigentMetrics | undefined;
  readonly recordValues: boolean;
  /** This process, as spans and logs name it: host name and pid. */
  readonly workerId = `${hostname()}:${process.pid}`;
  private pinningChecked = false;

  private constructor(options: TelemetryOptions) {
    this.tracer = options.tracerProvider?.getTracer(NAME);
    const meter = options.meterProvider?.getMeter(NAME);
    this.metrics = meter && DirigentMetrics.of(meter);
    this.recordValues = options.recordValues ?? false;
  }

  /** A telemetry from options (itself if it is one); undefined when there is nothing to record into. */
  static of(options: Telemetry | TelemetryOptions | undefined): Telemetry | undefined {
    if (options === undefined || options instanceof Telemetry) return options;
    if (options.tracerProvider === undefined && options.meterProvider === undefined)
      return undefined;
    return new Telemetry(options);
  }

  /**
   * The trace of a new run: its ids derived from the run id (a child run joins its parent's trace,
   * under the step that started it). Whether a root run is sampled is the tracer's sampler's call,
   * taken here once and kept with the run.
   */
  newRunTrace(runId: string, trigger: RunTrigger, parent?: SpanParent): RunTrace {
    const traceId = parent?.traceId ?? traceIdOfRun(runId);
    const spanId = runSpanId(runId);
    let sampled = parent?.sampled ?? false;
    if (parent === undefined && this.tracer !== undefined) {
      // The run's span, started only to ask the sampler, and never ended: it is recorded when the
      // run ends, wherever that is.
      const probe = this.startPinned(`run`, { traceId, spanId }, undefined, {});
      sampled = (probe.spanContext().traceFlags & SAMPLED) !== 0;
    }
    return {
      traceId,
      spanId,
      ...(parent !== undefined && { parentSpanId: parent.spanId }),
      sampled,
      trigger,
    };
  }

  /**
   * Records a span that has ended, with ids chosen by the caller (see run-trace.ts); nothing when
   * its parent is not sampled.
   */
  record(span: RecordedSpan): void {
    if (this.tracer === undefined) return;
    if (span.parent !== undefined && !span.parent.sampled) return;
    const s = this.startPinned(span.name, span, span.parent, {
      kind: span.kind ?? SPAN_KIND.INTERNAL,
      startTime: span.startTime,
      attributes: span.attributes,
    });
    if (span.events !== undefined)
      for (const e of span.events) s.addEvent(e.name, e.attributes, e.time);
    if (span.error !== undefined) this.setError(s, span.error);
    s.end(span.endTime);
  }

  /** Starts a live span (a tool job, a run job): random ids, under `parent` when given. */
  startSpan(name: string, options: SpanOptions, parent: SpanParent | Span | undefined): Span {
    const { trace, ROOT_CONTEXT } = otel();
    const tracer = this.tracer ?? trace.getTracer(NAME);
    const ctx =
      parent === undefined
        ? ROOT_CONTEXT
        : isSpan(parent)
          ? trace.setSpan(ROOT_CONTEXT, parent)
          : contextOf(parent);
    // The context is the root one or the parent's, never an active span of this process.
    return tracer.startSpan(name, options, ctx);
  }

  /** Marks a span failed: its status, `error.type` and an exception event (no stack). */
  setError(span: Span, error: SerializedError | DirigentError): void {
    span.setAttribute(Attr.ERROR_TYPE, error.code);
    span.setAttribute(Attr.ERROR_RETRYABLE, error.retryable);
    span.recordException({ name: error.code, message: error.message });
    span.setStatus({ code: SPAN_STATUS.ERROR, message: error.message });
  }

  /** `value` as a span attribute, when values are recorded (JSON, at most 4 KiB). */
  valueAttribute(value: unknown): string | undefined {
    if (!this.recordValues) return undefined;
    let json: string | undefined;
    try {
      json = JSON.stringify(value);
    } catch {
      return undefined;
    }
    return json !== undefined && json.length > VALUE_LIMIT
      ? `${json.slice(0, VALUE_LIMIT)}…`
      : json;
  }

  private startPinned(
    name: string,
    ids: { traceId: string; spanId: string },
    parent: SpanParent | undefined,
    options: SpanOptions,
  ): Span {
    const tracer = this.tracer!;
    // The tracer takes the pinned ids as it starts the span, synchronously; a root run's span
    // takes the trace id too. The context is the root one or the parent's (never an active span
    // of this process), so the span needs no `root` option.
    dirigentIdGenerator.pin(parent === undefined ? ids.traceId : undefined, ids.spanId);
    let span: Span;
    try {
      span = tracer.startSpan(
        name,
        options,
        parent === undefined ? otel().ROOT_CONTEXT : cachedContextOf(parent),
      );
    } finally {
      dirigentIdGenerator.unpin();
    }
    if (!this.pinningChecked && span.isRecording()) {
      this.pinningChecked = true;
      if (span.spanContext().spanId !== ids.spanId)
        otel().diag.warn(
          "Dirigent: the tracer provider does not use Dirigent's id generator, so a run's spans recorded in different processes will not join up; build it with `idGenerator: dirigentIdGenerator`.",
        );
    }
    return span;
  }
}

/** Each parent's context, made once: a run's spans name the same few parents again and again. */
const contexts = new WeakMap<SpanParent, Context>();

/** The context whose active span is `parent` (a remote one: recorded elsewhere, or later). */
export function contextOf(parent: SpanParent): Context {
  const { trace, ROOT_CONTEXT } = otel();
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: parent.sampled ? SAMPLED : 0,
    isRemote: true,
  });
}

/** {@link contextOf}, made once per parent object: a run names its own span as the parent of each step. */
function cachedContextOf(parent: SpanParent): Context {
  let ctx = contexts.get(parent);
  if (ctx === undefined) contexts.set(parent, (ctx = contextOf(parent)));
  return ctx;
}

/** The W3C `traceparent` of a live span. */
export function traceparentOf(span: Span): string {
  const c = span.spanContext();
  return formatTraceparent(c.traceId, c.spanId, (c.traceFlags & SAMPLED) !== 0);
}

/** The parent named by a `traceparent`, or undefined when there is none or it is malformed. */
export function parentOf(traceparent: string | undefined): SpanParent | undefined {
  return traceparent === undefined ? undefined : parseTraceparent(traceparent);
}

function isSpan(value: SpanParent | Span): value is Span {
  return typeof (value as Span).spanContext === 'function';
}
