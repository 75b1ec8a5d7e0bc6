/**
 * The spans of a worker's jobs: `drive <directive>` while a run worker drives a run (one per run
 * job: a run parked, handed over or taken over after a crash shows as several, each saying why it
 * was taken up), and `tool <item_id>` for a tool job, which stands for the runtime call too (the
 * dispatcher writes its runtime, exit code and outcome into {@link ToolJobSpan.callAttributes}:
 * tools/traced-dispatch.ts). How long a job waited in its queue is an attribute of its span
 * (`dirigent.queue.wait_ms`); a tool job under a lock or rate limit has a `lock wait` child. A
 * call run in process by the worker driving its run has no span of its own when its step
 * attempt's stands for it (`ToolCall.spanAttributes`); nor has a job of a trace not sampled.
 */
import type { Attributes, Span } from '@opentelemetry/api';
import type { Job } from 'bullmq';
import type { DirigentError } from '../errors/dirigent-error.js';
import { Attr } from '../telemetry/attributes.js';
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
 * The time from a job's enqueueing (or its delay's end) to its take-up, ms, recorded as a metric;
 * undefined for a job without an enqueueing time.
 */
function queueWait(t: Telemetry, queue: string, job: Job): number | undefined {
  if (job.timestamp <= 0) return undefined;
  const readyAt = job.timestamp + (job.opts.delay ?? 0);
  // A worker stamps its take-up with the time it asked for a job, which can come a moment before
  // another process stamped the job's enqueueing (a worker that finishes a job asks for the next
  // in the same command); and a delayed job promoted early is taken before its time. Either
  // waited no time: it is recorded as such, not left out.
  const ms = Math.max(job.processedOn ?? Date.now(), readyAt) - readyAt;
  t.metrics?.queueWait(queue, ms);
  return ms;
}

/** Whether the trace a `traceparent` names is recorded (a job without one starts its own). */
function sampled(traceparent: string | undefined): boolean {
  return parentOf(traceparent)?.sampled ?? true;
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
 * Starts the span of a run job, under the run's span; undefined when no spans are recorded. A
 * job taken over from a worker that stopped gets an event saying which worker took it.
 */
export function startDriveSpan(
  t: Telemetry,
  queue: string,
  job: Job,
  run: { runId: string; directive: string; trace: RunTrace | undefined },
  takenUp: TakenUp,
): JobSpan | undefined {
  // A job's first take-up waited in the queue; a retried or stalled one is no news there.
  const waited =
    job.attemptsStarted <= 1 && job.stalledCounter === 0 ? queueWait(t, queue, job) : undefined;
  if (t.tracer === undefined || run.trace === undefined || !run.trace.sampled) return undefined;
  const attributes = messaging(t, queue, job.id!);
  attributes[Attr.RUN_ID] = run.runId;
  attributes[Attr.DIRECTIVE_ID] = run.directive;
  attributes[Attr.RUN_TAKEN_UP] = takenUp;
  if (waited !== undefined) attributes[Attr.QUEUE_WAIT_MS] = waited;
  const { traceId, spanId, sampled } = run.trace;
  const span = t.startSpan(
    `drive ${run.directive}`,
    { kind: SPAN_KIND.CONSUMER, startTime: job.processedOn ?? Date.now(), attributes },
    { traceId, spanId, sampled },
  );
  if (takenUp === 'takeover')
    span.addEvent('taken over', {
      [Attr.WORKER_ID]: t.workerId,
      'dirigent.job.stalled': job.stalledCounter,
    });
  return new JobSpan(t, span);
}

/** The span of one take-up of a tool job, or of a call run in process (see the module comment). */
export class ToolJobSpan extends JobSpan {
  /**
   * What the span says of the call: the dispatcher writes it (`ToolCall.spanAttributes`), and it
   * goes on the span when it ends.
   */
  readonly callAttributes: Attributes = {};

  /** Starts it under the call's step attempt; undefined when no spans are recorded. */
  static start(t: Telemetry, queue: string, job: Job<ToolJobData>): ToolJobSpan | undefined {
    const d = job.data;
    // A deferred job waited for its lock, not in the queue: its lock wait says how long.
    const waited = d.deferrals ? undefined : queueWait(t, queue, job);
    if (t.tracer === undefined || !sampled(d.traceparent)) return undefined;
    const attributes = messaging(t, queue, job.id!);
    attributes[Attr.TOOL_ID] = d.itemId;
    attributes[Attr.RUN_ID] = d.runId;
    attributes[Attr.STEP_NAME] = d.step;
    attributes[Attr.STEP_ATTEMPT] = d.attempt;
    if (waited !== undefined) attributes[Attr.QUEUE_WAIT_MS] = waited;
    if (d.deferrals) attributes[Attr.LOCK_DEFERRALS] = d.deferrals;
    const span = t.startSpan(
      `tool ${d.itemId}`,
      { kind: SPAN_KIND.CONSUMER, startTime: job.processedOn ?? Date.now(), attributes },
      parentOf(d.traceparent),
    );
    return new ToolJobSpan(t, span);
  }

  /**
   * Starts the span of a call run in the process that drives its run (an eager call: no job, no
   * queue wait), under the call's step attempt, for a call whose attempt's span does not stand
   * for it; undefined when no spans are recorded.
   */
  static inProcess(t: Telemetry, d: ToolJobData): ToolJobSpan | undefined {
    if (t.tracer === undefined || !sampled(d.traceparent)) return undefined;
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

  /** Ends the span with the job's outcome (and what the dispatcher said of the call). */
  finish(outcome: string, error?: DirigentError): void {
    this.span.setAttributes(this.callAttributes);
    this.span.setAttribute(Attr.TOOL_OUTCOME, outcome);
    if (error === undefined) this.span.setStatus({ code: SPAN_STATUS.OK });
    this.end(error);
  }
}

/**
 * Marks the step attempt's span of a call run in process as the call's (see
 * `ToolCall.spanAttributes`): it ran here, on this worker.
 */
export function ranInProcess(t: Telemetry, spanAttributes: Attributes): void {
  spanAttributes[Attr.TOOL_IN_PROCESS] = true;
  spanAttributes[Attr.WORKER_ID] = t.workerId;
}

/** Records how long a tool job waited for its lock or rate before it could run. */
export function recordLockWait(
  t: Telemetry,
  ms: number,
  gated: { lock: boolean; rate: boolean },
): void {
  const kind = gated.lock && gated.rate ? 'lock+rate' : gated.lock ? 'concurrency' : 'rate';
  t.metrics?.lockWait(kind, ms);
}
