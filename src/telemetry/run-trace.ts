/**
 * A run's place in a trace. A run's spans are written by whichever process ends each part (the run,
 * a step attempt), possibly not the one that began it, so their ids are functions of the run
 * rather than random: the run's span id of its run id, a step attempt's of its run id, step
 * entry and attempt. Any process can name the parent of what it records, and a run resumed
 * after a crash continues the same trace. Pure: no OpenTelemetry SDK here.
 */
import { createHash } from 'node:crypto';

/** What started a run (the `dirigent.run.trigger` attribute). */
export type RunTrigger = 'cli' | 'api' | 'queue' | 'schedule' | 'batch' | 'library' | 'child';

/** Stored with the run (and carried by its jobs): enough to record any of its spans anywhere. */
export interface RunTrace {
  /** 32 lower-case hex digits. */
  traceId: string;
  /** The run's own span: 16 hex digits. */
  spanId: string;
  /** The span the run's span is a child of (a child run: its parent's step attempt). */
  parentSpanId?: string;
  /** Whether the trace is sampled (recorded and exported). */
  sampled: boolean;
  trigger: RunTrigger;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** 64 bits of a hash of `text`, as 16 hex digits (never all zero, which W3C forbids). */
function spanIdOf(text: string): string {
  const hex = createHash('sha256').update(text).digest('hex').slice(0, 16);
  return hex === '0000000000000000' ? '0000000000000001' : hex;
}

/**
 * The trace id of a run started by a trigger: its run id without dashes when that is a UUID (so
 * `dirigent status` and a tracing UI find each other by eye), else a hash of it.
 */
export function traceIdOfRun(runId: string): string {
  if (UUID.test(runId)) return runId.replaceAll('-', '').toLowerCase();
  return createHash('sha256').update(runId).digest('hex').slice(0, 32);
}

/** The span id of a run's own span. */
export function runSpanId(runId: string): string {
  return spanIdOf(`run:${runId}`);
}

/**
 * The span id of one attempt of a step entry (`seq`: the step's entry number in the run, which a
 * loop makes differ at each pass). A parallel block's span is its attempt 1.
 */
export function stepSpanId(runId: string, step: string, seq: number, attempt: number): string {
  return spanIdOf(`step:${runId}:${step}:${seq}:${attempt}`);
}

/** A W3C `traceparent` header value. */
export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The parts of a `traceparent`, or undefined when it is not one (all-zero ids included). */
export function parseTraceparent(
  value: string,
): { traceId: string; spanId: string; sampled: boolean } | undefined {
  const m = TRACEPARENT.exec(value.trim().toLowerCase());
  if (m === null || m[1] === 'ff') return undefined;
  const [, , traceId, spanId, flags] = m as unknown as [string, string, string, string, string];
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}
