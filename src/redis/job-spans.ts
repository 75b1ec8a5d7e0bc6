/**
 * The spans of a worker's jobs: `drive <directive>` while a run worker drives a run (one per run
 * job: a run parked, handed over or taken over after a crash shows as several, each saying why it
 * was taken up), and `tool <item_id>` for a tool job (or a call run in process), with `queue wait` and `lock wait` children
 * (the runtime call's span is the dispatcher's: tools/traced-dispatch.ts).
 */
import type { Attributes, Span } from '@opentelemetry/api';
import type { Job } from 'bullmq';
import type { DirigentError } from '../errors/dirigent-error.js';
import { Attr } from '../telemetry/attributes.js';
import { DirigentMetrics } from '../telemetry/dirigent-metrics.js';
import type { RunTrace } from '../telemetry/run-trace.js';
import {
  parentOf,
  SPAN_KIND,
  SPAN_STATUS,
  traceparentOf,
  type Telemetry,
} from '../telemetry/telemetry.js';
import type { ToolJobData } from './tool-job.js';

/** Why a run worker took up a run's job. */
export type TakenUp =
  | 'start'
  | 'signal'
  | 'cancel'
  | 'wake'
  | 'redrive'
  | 'unpause'
  | 'takeover'
  | 'resume';

/** The attributes of a job in a queue (OpenTelemetry's messaging conventions). */
function messaging(t: Telemetry, queue: string, jobId: string): Attributes {
  return {
    [Attr.MESSAGING_SYSTEM]: 'bullmq',
    [Attr.MESSAGING_DESTINATION]: queue,
    [Attr.MESSAGING_MESSAGE_ID]: jobId,
    [Attr.MESSAGING_OPERATION_TYPE]: 'process',
    [Attr.WORKER_ID]: t.workerId,
  };
}

/**
 * The time from a job's enqueueing to its take-up, as a metric, and as a span under `parent` when
 * given (recorded when `parent` ends: a child sent ahead of a parent its worker never ended, when
 * it dies, would be left without one).
 */
function queueWait(t: Telemetry, queue: string, job: Job, parent: JobSpan | undefined): void {
  if (job.timestamp <= 0) return;
  const readyAt = job.timestamp + (job.opts.delay ?? 0);
  // A worker stamps its take-up with the time it asked for a job, which can come a moment before
  // another process stamped the job's enqueueing (a worker that finishes a job asks for the next
  // in the same command); and a delayed job promoted early is taken before its time. Either
  // waited no time: it is recorded as such, not left out.
  const takenAt = Math.max(job.processedOn ?? Date.now(), readyAt);
  parent?.child('queue wait', readyAt, takenAt);
  if (t.metrics)
    DirigentMetrics.ms(t.metrics.queueWait, takenAt - readyAt, {
      [Attr.MESSAGING_DESTINATION]: queue,
    });
}

/** A job's span, whose children of known extent are recorded with it when it ends. */
export class JobSpan {
  private readonly children: {
    name: string;
    start: number;
    end: number;
    attributes?: Attributes;
  }[] = [];

  constructor(
    protected readonly t: Telemetry,
    readonly span: Span,
  ) {}

  /** A child from `start` to `end`, recorded when this span ends. */
  child(name: string, start: number, end: number, attributes?: Attributes): void {
    this.children.push({ name, start, end, ...(attributes && { attributes }) });
  }

  /** Ends the span (and records its children), with an error when the job failed. */
  end(error?: DirigentError): void {
    for (const c of this.children)
      this.t
        .startSpan(
          c.name,
          { startTime: c.start, ...(c.attributes && { attributes: c.attributes }) },
          this.span,
        )
        .end(c.end);
    if (error !== undefined) this.t.setError(this.span, error);
    this.span.end();
  }
}

/**
 * Starts the span of a run job, under the run's span. A job taken over from a worker that
 * stopped gets an event saying which worker took it.
 */
export function startDriveSpan(
  t: Telemetry,
  queue: string,
  job: Job,
  run: { runId: string; directive: string; trace: RunTrace | undefined },
  takenUp: TakenUp,
): JobSpan | undefined {
  if (t.tracer === undefined || run.trace === undefined) {
    if (job.attemptsStarted <= 1) queueWait(t, queue, job, undefined);
    return undefined;
  }
  const { traceId, spanId, sampled } = run.trace;
  const span = t.startSpan(
    `drive ${run.directive}`,
    {
      kind: SPAN_KIND.CONSUMER,
      startTime: job.processedOn ?? Date.now(),
      attributes: {
        ...messaging(t, queue, job.id!),
        [Attr.RUN_ID]: run.runId,
        [Attr.DIRECTIVE_ID]: run.directive,
        [Attr.RUN_TAKEN_UP]: takenUp,
      },
    },
    { traceId, spanId, sampled },
  );
  if (takenUp === 'takeover')
    span.addEvent('taken over', {
      [Attr.WORKER_ID]: t.workerId,
      'dirigent.job.stalled': job.stalledCounter,
    });
  const drive = new JobSpan(t, span);
  if (job.attemptsStarted <= 1 && job.stalledCounter === 0) queueWait(t, queue, job, drive);
  return drive;
}

/** The span of one take-up of a tool job (see the module comment). */
export class ToolJobSpan extends JobSpan {
  /** Starts it under the call's step attempt; undefined when no spans are recorded. */
  static start(t: Telemetry, queue: string, job: Job<ToolJobData>): ToolJobSpan | undefined {
    const d = job.data;
    if (t.tracer === undefined) {
      if (!d.deferrals) queueWait(t, queue, job, undefined);
      return undefined;
    }
    const span = t.startSpan(
      `tool ${d.itemId}`,
      {
        kind: SPAN_KIND.CONSUMER,
        startTime: job.processedOn ?? Date.now(),
        attributes: {
          ...messaging(t, queue, job.id!),
          [Attr.TOOL_ID]: d.itemId,
          [Attr.RUN_ID]: d.runId,
          [Attr.STEP_NAME]: d.step,
          [Attr.STEP_ATTEMPT]: d.attempt,
          ...(d.deferrals && { [Attr.LOCK_DEFERRALS]: d.deferrals }),
        },
      },
      parentOf(d.traceparent),
    );
    const tool = new ToolJobSpan(t, span);
    // A deferred job waited for its lock, not in the queue: its lock wait says how long.
    if (!d.deferrals) queueWait(t, queue, job, tool);
    return tool;
  }

  /**
   * Starts the span of a call run in the process that drives its run (an eager call: no job, no
   * queue wait), under the call's step attempt; undefined when no spans are recorded.
   */
  static inProcess(t: Telemetry, d: ToolJobData): ToolJobSpan | undefined {
    if (t.tracer === undefined) return undefined;
    const span = t.startSpan(
      `tool ${d.itemId}`,
      {
        attributes: {
          [Attr.TOOL_ID]: d.itemId,
          [Attr.RUN_ID]: d.runId,
          [Attr.STEP_NAME]: d.step,
          [Attr.STEP_ATTEMPT]: d.attempt,
          [Attr.TOOL_IN_PROCESS]: true,
          [Attr.WORKER_ID]: t.workerId,
        },
      },
      parentOf(d.traceparent),
    );
    return new ToolJobSpan(t, span);
  }

  /** What the tool's own spans hang under. */
  get traceparent(): string {
    return traceparentOf(this.span);
  }

  /** The job waited for its lock or rate from `since` until now: `blockedBy` when it must wait on. */
  lockWait(since: number, blockedBy: string | undefined): void {
    this.child(
      'lock wait',
      since,
      Date.now(),
      blockedBy ? { [Attr.LOCK_KEY]: blockedBy } : undefined,
    );
  }

  /** Ends the span with the job's outcome. */
  finish(outcome: string, error?: DirigentError): void {
    this.span.setAttribute(Attr.TOOL_OUTCOME, outcome);
    if (error === undefined) this.span.setStatus({ code: SPAN_STATUS.OK });
    this.end(error);
  }
}

/** Records how long a tool job waited for its lock or rate before it could run. */
export function recordLockWait(
  t: Telemetry,
  ms: number,
  gated: { lock: boolean; rate: boolean },
): void {
  if (t.metrics === undefined) return;
  const kind = gated.lock && gated.rate ? 'lock+rate' : gated.lock ? 'concurrency' : 'rate';
  DirigentMetrics.ms(t.metrics.lockWait, ms, { [Attr.LOCK_KIND]: kind });
}
