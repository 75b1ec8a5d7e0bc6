/**
 * The gate a tool job passes before it runs on a worker: the tool's rate limit, then its
 * concurrency slot, both keyed by a template over the call's parameters (`repo:${inputs.repo}`).
 * A job that cannot pass is deferred (moved back to the delayed set), never held on a worker slot.
 */
import type { Redis } from 'ioredis';
import type { ToolItem } from '../items/tool-item.js';
import { tryAcquire, type LockSlot } from '../locks/keyed-semaphore.js';
import { tryConsume } from '../locks/rate-limiter.js';

/** The outcome: go ahead (holding `slot`, if the tool declares a concurrency limit) or wait. */
export type GateOutcome = { slot?: LockSlot } | { retryAfterMs?: number; blockedBy: string };

const KEY_REF = /\$\{(?:inputs|params)\.([A-Za-z0-9_.]+)\}/g;

/** A lock key template with `${inputs.x}` (or `${params.x}`) filled from the call's parameters. */
export function renderLockKey(template: string, params: Record<string, unknown>): string {
  return template.replace(KEY_REF, (_, path: string) => {
    let v: unknown = params;
    for (const part of path.split('.')) v = (v as Record<string, unknown> | undefined)?.[part];
    return typeof v === 'string' ? v : JSON.stringify(v ?? null);
  });
}

/** Checks the tool's rate limit and takes its concurrency slot, if it declares them. */
export async function passGate(
  redis: Redis,
  prefix: string,
  tool: ToolItem,
  params: Record<string, unknown>,
): Promise<GateOutcome> {
  if (tool.rateLimit) {
    const { key, max, durationMs } = tool.rateLimit;
    const rendered = renderLockKey(key, params);
    const rate = await tryConsume(redis, prefix, rendered, max, durationMs);
    if (!rate.ok) return { retryAfterMs: rate.retryAfterMs, blockedBy: `rate ${rendered}` };
  }
  if (tool.concurrency) {
    const { key, limit, leaseMs } = tool.concurrency;
    const rendered = renderLockKey(key, params);
    const slot = await tryAcquire(redis, prefix, rendered, limit, leaseMs);
    if (slot === undefined) return { blockedBy: `lock ${rendered}` };
    return { slot };
  }
  return {};
}
