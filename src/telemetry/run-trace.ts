/**
 * A run's place in a trace. A run's spans are written by whichever process ends each part (the run,
 * a step attempt), possibly not the one that began it, so their ids are functions of the run
 * rather than random: the run's span id of its run id, a step attempt's of its run id, step
 * entry and attempt. Any process can name the parent of what it records, and a run resumed
 * after a crash continues the same trace. Pure: no OpenTelemetry SDK here.
 */
import { createHash } from 'node:crypto';

/** What started a run (the `dirigent.run.trigger` attribute). */
export type RunTrigger =
  | 'cli'
  | 'api'
  | 'queue'
  | 'schedule'
  | 'event'
  | 'batch'
  | 'library'
  | 'mcp'
  | 'child';

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

/** cyrb53's two 32-bit lanes part-way through a text: hashing goes on from here. */
interface HashState {
  h1: number;
  h2: number;
}

const SEED: HashState = { h1: 0xdeadbeef, h2: 0x41c6ce57 };

/** The lanes after `text`, from `from`. */
function feed(from: HashState, text: string): HashState {
  let { h1, h2 } = from;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  return { h1, h2 };
}

/**
 * 64 bits of a hash of the text that brought the lanes to `state`, as 16 hex digits (never all
 * zero, which W3C forbids): cyrb53's two 32-bit lanes, kept whole. Not cryptographic, and needs
 * not be: ids are unique within a trace, where a collision of 64 bits is out of reach, and it
 * costs a fraction of a SHA-256 (a step computes one).
 */
function spanIdAt(state: HashState): string {
  let { h1, h2 } = state;
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const hex = hex8(h2) + hex8(h1);
  return hex === '0000000000000000' ? '0000000000000001' : hex;
}

function spanIdOf(text: string): string {
  return spanIdAt(feed(SEED, text));
}

/** Two hex digits of each byte value. */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** A 32-bit lane as 8 hex digits, by bytes (several times quicker than `toString(16)` and a pad). */
function hex8(n: number): string {
  return HEX[n >>> 24]! + HEX[(n >>> 16) & 255]! + HEX[(n >>> 8) & 255]! + HEX[n & 255]!;
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

/**
 * {@link stepSpanId} for one run: the run's part of the hash is taken once, and each id hashes
 * only its step, entry and attempt (the same ids, for a fraction of the work).
 */
export function stepSpanIdsOf(
  runId: string,
): (step: string, seq: number, attempt: number) => string {
  const run = feed(SEED, `step:${runId}:`);
  return (step, seq, attempt) => spanIdAt(feed(run, `${step}:${seq}:${attempt}`));
}

/** A W3C `traceparent` header value. */
export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}

/**
 * The parts of a `traceparent` (`00-<32 hex>-<16 hex>-<2 hex>`), or undefined when it is not one
 * (an all-zero id and version `ff` included). Read by position: every tool call passes here.
 */
export function parseTraceparent(
  value: string,
): { traceId: string; spanId: string; sampled: boolean } | undefined {
  const v = value.length === 55 ? value : value.trim().toLowerCase();
  if (v.length !== 55 || v[2] !== '-' || v[35] !== '-' || v[52] !== '-') return undefined;
  if (!isHex(v, 0, 2) || !isHex(v, 3, 35) || !isHex(v, 36, 52) || !isHex(v, 53, 55))
    return undefined;
  if (v.startsWith('ff')) return undefined;
  const traceId = v.slice(3, 35);
  const spanId = v.slice(36, 52);
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, sampled: (parseInt(v.slice(53), 16) & 1) === 1 };
}

const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** Whether `v[from, to)` is lower-case hex. */
function isHex(v: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = v.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}
