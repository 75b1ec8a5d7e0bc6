/**
 * The gate a tool job passes before it runs on a worker: rate limits, then concurrency slots, the
 * step's (`<lock>`, `<rate_limit>`) and the tool's (keyed by a template over the call's
 * parameters, `repo:${inputs.repo}`).
 * A job that cannot pass is deferred (moved back to the delayed set), never held on a worker slot.
 */
import type { RedisClient } from '../redis-client.js';
import type { ToolItem } from '../../items/tool-item.js';
import type { ToolGate } from '../../tools/tool-call.js';
import { tryAcquire, type LockSlot } from '../../locks/keyed-semaphore.js';
import { tryConsume } from '../../locks/rate-limiter.js';
import type { KeySpace } from '../../locks/key-space.js';

/** The outcome: go ahead (holding the slots of the concurrency limits, if any) or wait. */
export type GateOutcome = { slots: LockSlot[] } | { retryAfterMs?: number; blockedBy: string };

const KEY_REF = /\$\{(?:inputs|params)\.([A-Za-z0-9_.]+)\}/g;

/** A lock key template with `${inputs.x}` (or `${params.x}`) filled from the call's parameters. */
export function renderLockKey(template: string, params: Record<string, unknown>): string {
  return template.replace(KEY_REF, (_, path: string) => {
    let v: unknown = params;
    for (const part of path.split('.')) v = (v as Record<string, unknown> | undefined)?.[part];
    return typeof v === 'string' ? v : JSON.stringify(v ?? null);
  });
}

/**
 * Checks the rate limits, then takes the concurrency slots, of the step (`gate`, keys already
 * rendered) and of the tool (keys rendered here from the parameters). All or nothing: a slot taken
 * is given back when a later one is not free.
 */
export async function passGate(
  redis: RedisClient,
  space: KeySpace,
  gate: ToolGate | undefined,
  tool: ToolItem | undefined,
  params: Record<string, unknown>,
): Promise<GateOutcome> {
  const rates = [gate?.rateLimit, tool?.rateLimit].flatMap((r) => (r ? [r] : []));
  for (const { key, max, durationMs } of rates) {
    const rendered = renderLockKey(key, params);
    const rate = await tryConsume(redis, space, rendered, max, durationMs);
    if (!rate.ok) return { retryAfterMs: rate.retryAfterMs, blockedBy: `rate ${rendered}` };
  }
  const locks = [gate?.concurrency, tool?.concurrency].flatMap((c) => (c ? [c] : []));
  const slots: LockSlot[] = [];
  for (const { key, limit, leaseMs } of locks) {
    const rendered = renderLockKey(key, params);
    const slot = await tryAcquire(redis, space, rendered, limit, leaseMs);
    if (slot === undefined) {
      await Promise.all(slots.map((s) => s.release()));
      return { blockedBy: `lock ${rendered}` };
    }
    slots.push(slot);
  }
  return { slots };
}
