import type { RetryPolicy } from '../directive/ast.js';

/**
 * Delay before try number `attempt + 1`, after `attempt` failed tries (1-based): fixed, or
 * doubling from `delayMs`, never above `maxDelayMs`.
 */
export function backoffDelay(policy: RetryPolicy, attempt: number): number {
  const raw =
    policy.backoff === 'fixed' ? policy.delayMs : policy.delayMs * 2 ** Math.max(0, attempt - 1);
  return Math.min(raw, policy.maxDelayMs);
}
