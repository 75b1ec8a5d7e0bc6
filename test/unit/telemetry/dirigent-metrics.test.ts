/**
 * Dirigent's metrics as a reader sees them: the counts Dirigent keeps itself (an attribute set
 * bound once, then a map lookup per add) come out as the SDK's own counters would, a monotonic sum
 * per attribute set, cumulative or as deltas; a duration is recorded in seconds under the same
 * attribute set each time; and everything that records into one meter shares one set of
 * instruments and counts.
 */
import {
  AggregationTemporality,
  DataPointType,
  MeterProvider,
  MetricReader,
} from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { DirigentMetrics } from '../../../src/telemetry/dirigent-metrics.js';
import { Telemetry } from '../../../src/telemetry/telemetry.js';

class Reader extends MetricReader {
  constructor(temporality: AggregationTemporality) {
    super({ aggregationTemporalitySelector: () => temporality });
  }
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Each point of metric `name` the reader collects now: attributes and value. */
async function points(reader: Reader, name: string) {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics
    .flatMap((s) => s.metrics)
    .find((m) => m.descriptor.name === name);
  return {
    type: metric?.dataPointType,
    monotonic: metric && 'isMonotonic' in metric ? metric.isMonotonic : undefined,
    points: (metric?.dataPoints ?? []).map((p) => ({ attributes: p.attributes, value: p.value })),
  };
}

function metricsOf(temporality: AggregationTemporality) {
  const reader = new Reader(temporality);
  const provider = new MeterProvider({ readers: [reader] });
  return { reader, provider, metrics: DirigentMetrics.of(provider.getMeter('dirigent')) };
}

describe("Dirigent's metrics", () => {
  it('export the step attempts they count as a monotonic sum per attribute set', async () => {
    const { reader, provider, metrics } = metricsOf(AggregationTemporality.CUMULATIVE);
    metrics.stepEnded('d', 'a', 'tool', 'completed', 2, undefined);
    metrics.stepEnded('d', 'a', 'tool', 'completed', 3, undefined);
    metrics.stepEnded('d', 'a', 'tool', 'failed', 1, 'COMMAND_FAILED');
    metrics.stepEnded('d', 'b', 'render', 'completed', 1, undefined);
    const attempts = await points(reader, 'dirigent.step.attempts');
    expect(attempts.type).toBe(DataPointType.SUM);
    expect(attempts.monotonic).toBe(true);
    expect(attempts.points).toEqual(
      expect.arrayContaining([
        {
          attributes: {
            'dirigent.directive.id': 'd',
            'dirigent.step.name': 'a',
            'dirigent.step.outcome': 'completed',
          },
          value: 2,
        },
        {
          attributes: {
            'dirigent.directive.id': 'd',
            'dirigent.step.name': 'a',
            'dirigent.step.outcome': 'failed',
            'error.type': 'COMMAND_FAILED',
          },
          value: 1,
        },
        {
          attributes: {
            'dirigent.directive.id': 'd',
            'dirigent.step.name': 'b',
            'dirigent.step.outcome': 'completed',
          },
          value: 1,
        },
      ]),
    );
    expect(attempts.points).toHaveLength(3);
    const durations = await points(reader, 'dirigent.step.duration');
    expect(durations.type).toBe(DataPointType.HISTOGRAM);
    const completed = durations.points.find(
      (p) =>
        p.attributes['dirigent.step.kind'] === 'tool' &&
        p.attributes['dirigent.step.outcome'] === 'completed',
    );
    expect(completed?.value).toMatchObject({ count: 2, sum: 0.005 }); // seconds
    await provider.shutdown();
  });

  it('go on counting across collections, or count each interval alone under delta temporality', async () => {
    for (const [temporality, second] of [
      [AggregationTemporality.CUMULATIVE, 3],
      [AggregationTemporality.DELTA, 1],
    ] as const) {
      const { reader, provider, metrics } = metricsOf(temporality);
      metrics.toolCallEnded('t', 'completed', 1, undefined);
      metrics.toolCallEnded('t', 'completed', 1, undefined);
      expect((await points(reader, 'dirigent.tool.calls')).points[0]!.value).toBe(2);
      metrics.toolCallEnded('t', 'completed', 1, undefined);
      expect((await points(reader, 'dirigent.tool.calls')).points[0]!.value).toBe(second);
      await provider.shutdown();
    }
  });

  it('are one set per meter, whatever records into it', async () => {
    const reader = new Reader(AggregationTemporality.CUMULATIVE);
    const meterProvider = new MeterProvider({ readers: [reader] });
    // An engine and its dispatcher each make a telemetry of the same options.
    const engine = Telemetry.of({ meterProvider })!;
    const dispatcher = Telemetry.of({ meterProvider })!;
    expect(engine.metrics).toBe(dispatcher.metrics);
    engine.metrics!.runStarted('d', 'cli');
    dispatcher.metrics!.runStarted('d', 'cli');
    expect((await points(reader, 'dirigent.run.started')).points).toEqual([
      { attributes: { 'dirigent.directive.id': 'd', 'dirigent.run.trigger': 'cli' }, value: 2 },
    ]);
    await meterProvider.shutdown();
  });
});
