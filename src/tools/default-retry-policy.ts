import type { RetryPolicy } from '../directive/ast.js';

/**
 * The retry policy of a tool that declares none, and of a step without `<retry>`: three tries in
 * all, waiting 1 s, then 2 s, doubling up to 30 s. Frozen because every tool shares it.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  attempts: 3,
  backoff: 'exponential',
  delayMs: 1000,
  maxDelayMs: 30000,
});
