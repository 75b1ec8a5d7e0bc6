/**
 * OpenTelemetry providers that keep what they record in memory, for tests: spans through the SDK's
 * `InMemorySpanExporter` (built with Dirigent's id generator, as a real process is), metrics
 * through a reader the test collects from.
 */
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';
import { dirigentIdGenerator } from '../../src/telemetry/pinned-id-generator.js';
import type { TelemetryOptions } from '../../src/telemetry/telemetry.js';

class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** In-memory telemetry: `options` for an engine or worker, and what it recorded. */
export function memoryTelemetry(sampler?: Sampler) {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    ...(sampler && { sampler }),
    idGenerator: dirigentIdGenerator,
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const options: TelemetryOptions = { tracerProvider, meterProvider };
  return {
    options,
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    /** Each data point of each metric, by metric name. */
    async metrics(): Promise<
      Map<string, { attributes: Record<string, unknown>; value: unknown }[]>
    > {
      const { resourceMetrics } = await reader.collect();
      const out = new Map<string, { attributes: Record<string, unknown>; value: unknown }[]>();
      for (const scope of resourceMetrics.scopeMetrics)
        for (const m of scope.metrics)
          out.set(
            m.descriptor.name,
            m.dataPoints.map((p) => ({ attributes: { ...p.attributes }, value: p.value })),
          );
      return out;
    },
    async close(): Promise<void> {
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}

/** The parent span id of a span (SDK 2.x keeps it in `parentSpanContext`). */
export function parentIdOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/**
 * Checks the spans form trees: every parent is among them. Returns the roots.
 */
export function rootsOf(spans: ReadableSpan[]): ReadableSpan[] {
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  const dangling = spans.filter((s) => parentIdOf(s) !== undefined && !ids.has(parentIdOf(s)!));
  if (dangling.length > 0)
    throw new Error(`spans with a missing parent: ${dangling.map((s) => s.name).join(', ')}`);
  return spans.filter((s) => parentIdOf(s) === undefined);
}
