import { randomFillSync } from 'node:crypto';
import type { IdGenerator } from '@opentelemetry/sdk-trace-base';

/**
 * An id generator that hands out chosen ids for the next span started, and random ones otherwise.
 * Dirigent records a run's span and its step attempts' spans with ids derived from the run (see
 * run-trace.ts), in whichever process ends them; a tracer provider must be built with this
 * generator for that to work (`startTelemetry()` does; a library user passes
 * {@link dirigentIdGenerator} as the provider's `idGenerator`).
 */
export class PinnedIdGenerator implements IdGenerator {
  private traceId: string | undefined;
  private spanId: string | undefined;

  generateTraceId(): string {
    const id = this.traceId;
    if (id === undefined) return randomHex(32);
    this.traceId = undefined;
    return id;
  }

  generateSpanId(): string {
    const id = this.spanId;
    if (id === undefined) return randomHex(16);
    this.spanId = undefined;
    return id;
  }

  /**
   * Hands out these ids to the next span started (the trace id only to a root span, which asks
   * for one), until {@link unpin}: start exactly one span, synchronously, in between.
   */
  pin(traceId: string | undefined, spanId: string): void {
    this.traceId = traceId;
    this.spanId = spanId;
  }

  /** Forgets whatever pinned id the span started since {@link pin} did not take. */
  unpin(): void {
    this.traceId = undefined;
    this.spanId = undefined;
  }
}

/** The one generator the tracer providers of Dirigent's processes are built with. */
export const dirigentIdGenerator = new PinnedIdGenerator();

/** Random bytes, drawn in blocks: an id costs a slice of it, not a call into the system. */
const pool = Buffer.allocUnsafe(4096);
let used = pool.length;

/** `digits` random hex digits, never all zero (as OpenTelemetry's own generator). */
function randomHex(digits: number): string {
  const bytes = digits / 2;
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const out = pool.toString('hex', used, used + bytes);
  used += bytes;
  return /^0+$/.test(out) ? `${out.slice(0, -1)}1` : out;
}
