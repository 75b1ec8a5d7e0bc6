import type { Dirigent } from '../operations/dirigent.js';
import type { SseStream } from './sse-stream.js';

/** What the routes of one API server share. */
export interface ApiContext {
  /** The operations every route calls. */
  readonly dirigent: Dirigent;
  /** Resolves when the server begins to close: waits answer at once, streams end. */
  readonly closing: Promise<void>;
  /** The event streams open now (ended when the server closes). */
  readonly streams: Set<SseStream>;
  /** Body limits in bytes, by what the body carries. */
  readonly bodyLimits: { inputs: number; payload: number; source: number; small: number };
  /** How often an event stream sends a heartbeat comment. */
  readonly heartbeatMs: number;
  /** Whether clients may run tools directly, copy and sign items (`--full-access`). */
  readonly fullAccess: boolean;
}
