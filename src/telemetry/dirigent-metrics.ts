import type { Meter } from '@opentelemetry/api';
import { Attr, Metric } from './attributes.js';
import { KeyedCounter } from './keyed-counter.js';
import { KeyedHistogram } from './keyed-histogram.js';

/** The metrics of each meter: one set, whoever records into it (see {@link DirigentMetrics.of}). */
const byMeter = new WeakMap<Meter, DirigentMetrics>();

/**
 * The metrics Dirigent records (see attributes.ts, `Metric`), one method per fact. Attribute sets
 * are bound once to the strings they are made of: a counter's counts are kept here and read when
 * a reader collects ({@link KeyedCounter}), and a histogram is handed the same attribute object
 * every time ({@link KeyedHistogram}). An error type, when there is one, is the code of the
 * error.
 */
export class DirigentMetrics {
  private readonly runDuration: KeyedHistogram;
  private readonly runStartedCount: KeyedCounter;
  private readonly runEndedCount: KeyedCounter;
  private readonly stepDuration: KeyedHistogram;
  private readonly stepAttempts: KeyedCounter;
  private readonly toolDuration: KeyedHistogram;
  private readonly toolCalls: KeyedCounter;
  private readonly queueWaitTime: KeyedHistogram;
  private readonly lockWaitTime: KeyedHistogram;

  private constructor(
    /** The meter the instruments were made by (the queue gauges join them there). */
    readonly meter: Meter,
  ) {
    this.runDuration = new KeyedHistogram(meter, Metric.RUN_DURATION, 'Duration of ended runs.');
    this.runStartedCount = new KeyedCounter(meter, Metric.RUN_STARTED, 'Runs started.');
    this.runEndedCount = new KeyedCounter(meter, Metric.RUN_ENDED, 'Runs ended.');
    this.stepDuration = new KeyedHistogram(
      meter,
      Metric.STEP_DURATION,
      'Duration of step attempts.',
    );
    this.stepAttempts = new KeyedCounter(meter, Metric.STEP_ATTEMPTS, 'Step attempts, by outcome.');
    this.toolDuration = new KeyedHistogram(meter, Metric.TOOL_DURATION, 'Duration of tool calls.');
    this.toolCalls = new KeyedCounter(meter, Metric.TOOL_CALLS, 'Tool calls, by outcome.');
    this.queueWaitTime = new KeyedHistogram(
      meter,
      Metric.QUEUE_WAIT,
      'Time from enqueueing a job to a worker taking it.',
    );
    this.lockWaitTime = new KeyedHistogram(
      meter,
      Metric.LOCK_WAIT,
      'Time a tool job waited for its lock or rate.',
    );
  }

  /**
   * The metrics of `meter`, made the first time it is asked for: every engine, dispatcher and
   * worker recording into one meter shares one set of instruments and counts.
   */
  static of(meter: Meter): DirigentMetrics {
    let m = byMeter.get(meter);
    if (m === undefined) byMeter.set(meter, (m = new DirigentMetrics(meter)));
    return m;
  }

  /** A run started (not a resumed one). */
  runStarted(directive: string, trigger: string): void {
    if (!this.runStartedCount.add(directive, trigger))
      this.runStartedCount.bind(
        { [Attr.DIRECTIVE_ID]: directive, [Attr.RUN_TRIGGER]: trigger },
        directive,
        trigger,
      );
  }

  /** A run ended after `ms` with `status`. */
  runEnded(
    directive: string,
    trigger: string,
    status: string,
    ms: number,
    errorType: string | undefined,
  ): void {
    if (!this.runDuration.record(ms, directive, trigger, status))
      this.runDuration.bind(
        {
          [Attr.DIRECTIVE_ID]: directive,
          [Attr.RUN_TRIGGER]: trigger,
          [Attr.RUN_STATUS]: status,
        },
        ms,
        directive,
        trigger,
        status,
      );
    if (!this.runEndedCount.add(directive, trigger, status, errorType))
      this.runEndedCount.bind(
        {
          [Attr.DIRECTIVE_ID]: directive,
          [Attr.RUN_TRIGGER]: trigger,
          [Attr.RUN_STATUS]: status,
          ...(errorType !== undefined && { [Attr.ERROR_TYPE]: errorType }),
        },
        directive,
        trigger,
        status,
        errorType,
      );
  }

  /** A step's attempt ended after `ms` with `outcome`. */
  stepEnded(
    directive: string,
    step: string,
    kind: string,
    outcome: string,
    ms: number,
    errorType: string | undefined,
  ): void {
    if (!this.stepDuration.record(ms, directive, kind, outcome))
      this.stepDuration.bind(
        {
          [Attr.DIRECTIVE_ID]: directive,
          [Attr.STEP_KIND]: kind,
          [Attr.STEP_OUTCOME]: outcome,
        },
        ms,
        directive,
        kind,
        outcome,
      );
    if (!this.stepAttempts.add(directive, step, outcome, errorType))
      this.stepAttempts.bind(
        {
          [Attr.DIRECTIVE_ID]: directive,
          [Attr.STEP_NAME]: step,
          [Attr.STEP_OUTCOME]: outcome,
          ...(errorType !== undefined && { [Attr.ERROR_TYPE]: errorType }),
        },
        directive,
        step,
        outcome,
        errorType,
      );
  }

  /** A tool call ended after `ms` with `outcome`. */
  toolCallEnded(tool: string, outcome: string, ms: number, errorType: string | undefined): void {
    if (!this.toolDuration.record(ms, tool, outcome))
      this.toolDuration.bind(
        { [Attr.TOOL_ID]: tool, [Attr.TOOL_OUTCOME]: outcome },
        ms,
        tool,
        outcome,
      );
    if (!this.toolCalls.add(tool, outcome, errorType))
      this.toolCalls.bind(
        {
          [Attr.TOOL_ID]: tool,
          [Attr.TOOL_OUTCOME]: outcome,
          ...(errorType !== undefined && { [Attr.ERROR_TYPE]: errorType }),
        },
        tool,
        outcome,
        errorType,
      );
  }

  /** A job of `queue` waited `ms` from its enqueueing (or its delay's end) to its take-up. */
  queueWait(queue: string, ms: number): void {
    if (!this.queueWaitTime.record(ms, queue))
      this.queueWaitTime.bind({ [Attr.MESSAGING_DESTINATION]: queue }, ms, queue);
  }

  /** A tool job waited `ms` for its lock or rate (`kind`: concurrency, rate, lock+rate). */
  lockWait(kind: string, ms: number): void {
    if (!this.lockWaitTime.record(ms, kind))
      this.lockWaitTime.bind({ [Attr.LOCK_KIND]: kind }, ms, kind);
  }
}
