/**
 * The spans of a worker's jobs: `drive <directive>` while a run worker drives a run (one per run
 * job: a run parked, handed over or taken over after a crash shows as several, each saying why it
 * was taken up), and `tool <item_id>` for a tool job, with `queue wait` and `lock wait` children
 * (the runtime call's span is the dispatcher's: tools/traced-dispatch.ts).
 */
import { SpanKind, SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';
import type { Job } from 'bullmq';
import type { DirigentError } from '../errors/dirigent-error.js';
import { Attr } from '../telemetry/attributes.js';
import { DirigentMetrics } from '../telemetry/dirigent-metrics.js';
import type { RunTrace } from '../telemetry/run-trace.js';
import { parentOf, traceparentOf, type Telemetry } from '../telemetry/telemetry.js';
import type { ToolJobData } from './tool-job.js';

/** Why a run worker took up a run's job. */
export type TakenUp = 'start' | 'signal' | 'cancel' | 'wake' | 'takeover' | 'resume';

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

/** Records the time from a job's enqueueing to its take-up, as a span under `parent` and a metric. */
function queueWait(t: Telemetry, queue: string, job: Job, parent: Span | undefined): void {
  const takenAt = job.processedOn ?? Date.now();
  if (job.timestamp <= 0 || takenAt < job.timestamp) return;
  const readyAt = job.timestamp + (job.opts.delay ?? 0);
  if (parent !== undefined) t.startSpan('queue wait', { startTime: readyAt }, parent).end(takenAt);
  if (t.metrics)
    DirigentMetrics.ms(t.metrics.queueWait, takenAt - readyAt, {
      [Attr.MESSAGING_DESTINATION]: queue,
    });
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
): Span | undefined {
  if (t.tracer === undefined || run.trace === undefined) {
    if (job.attemptsStarted <= 1) queueWait(t, queue, job, undefined);
    return undefined;
  }
  const { traceId, spanId, sampled } = run.trace;
  const span = t.startSpan(
    `drive ${run.directive}`,
    {
      kind: SpanKind.CONSUMER,
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
  if (job.attemptsStarted <= 1 && job.stalledCounter === 0) queueWait(t, queue, job, span);
  return span;
}

/** The span of one take-up of a tool job (see the module comment). */
export class ToolJobSpan {
  private constructor(
    private readonly t: Telemetry,
    readonly span: Span,
  ) {}

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
        kind: SpanKind.CONSUMER,
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
    // A deferred job waited for its lock, not in the queue: its lock wait says how long.
    if (!d.deferrals) queueWait(t, queue, job, span);
    return new ToolJobSpan(t, span);
  }

  /** What the tool's own spans hang under. */
  get traceparent(): string {
    return traceparentOf(this.span);
  }

  /** The job waited for its lock or rate from `since` until now: `blockedBy` when it must wait on. */
  lockWait(since: number, blockedBy: string | undefined): void {
    const s = this.t.startSpan('lock wait', { startTime: since }, this.span);
    if (blockedBy !== undefined) s.setAttribute(Attr.LOCK_KEY, blockedBy);
    s.end();
  }

  /** Ends the span with the job's outcome. */
  end(outcome: string, error?: DirigentError): void {
    this.span.setAttribute(Attr.TOOL_OUTCOME, outcome);
    if (error !== undefined) this.t.setError(this.span, error);
    else this.span.setStatus({ code: SpanStatusCode.OK });
    this.span.end();
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
