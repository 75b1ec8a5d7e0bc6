import type { Attributes, Counter, Histogram, Meter } from '@opentelemetry/api';
import { DURATION_BUCKETS_S, Metric } from './attributes.js';

/** The instruments Dirigent records into, made once per meter (see attributes.ts, `Metric`). */
export class DirigentMetrics {
  readonly runDuration: Histogram;
  readonly runStarted: Counter;
  readonly runEnded: Counter;
  readonly stepDuration: Histogram;
  readonly stepAttempts: Counter;
  readonly toolDuration: Histogram;
  readonly toolCalls: Counter;
  readonly queueWait: Histogram;
  readonly lockWait: Histogram;

  constructor(readonly meter: Meter) {
    const seconds = (name: string, description: string) =>
      meter.createHistogram(name, {
        description,
        unit: 's',
        advice: { explicitBucketBoundaries: DURATION_BUCKETS_S },
      });
    this.runDuration = seconds(Metric.RUN_DURATION, 'Duration of ended runs.');
    this.runStarted = meter.createCounter(Metric.RUN_STARTED, { description: 'Runs started.' });
    this.runEnded = meter.createCounter(Metric.RUN_ENDED, { description: 'Runs ended.' });
    this.stepDuration = seconds(Metric.STEP_DURATION, 'Duration of step attempts.');
    this.stepAttempts = meter.createCounter(Metric.STEP_ATTEMPTS, {
      description: 'Step attempts, by outcome.',
    });
    this.toolDuration = seconds(Metric.TOOL_DURATION, 'Duration of tool calls.');
    this.toolCalls = meter.createCounter(Metric.TOOL_CALLS, {
      description: 'Tool calls, by outcome.',
    });
    this.queueWait = seconds(
      Metric.QUEUE_WAIT,
      'Time from enqueueing a job to a worker taking it.',
    );
    this.lockWait = seconds(Metric.LOCK_WAIT, 'Time a tool job waited for its lock or rate.');
  }

  /** Records `ms` milliseconds into a seconds histogram. */
  static ms(h: Histogram, ms: number, attributes: Attributes): void {
    h.record(Math.max(0, ms) / 1000, attributes);
  }
}
