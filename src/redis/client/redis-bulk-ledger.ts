/**
 * The ledger of bulk actions on a Redis deployment (see `operations/bulk-action.ts`): a hash per
 * action, `<prefix>:bulk:<action id>` (run id → outcome), kept for 7 days after its last write.
 */
import type { RedisClient } from '../redis-client.js';
import type { BulkLedger, BulkOutcome } from '../../operations/bulk-action.js';

/** How long an action's ledger is kept after its last write, in seconds. */
const KEPT_S = 7 * 24 * 3600;

/** See the module comment. */
export class RedisBulkLedger implements BulkLedger {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  async lookup(actionId: string, runIds: readonly string[]): Promise<Map<string, BulkOutcome>> {
    const found = new Map<string, BulkOutcome>();
    if (runIds.length === 0) return found;
    const values = await this.redis.hmget(this.keyOf(actionId), ...runIds);
    values.forEach((v, i) => {
      if (v !== null) found.set(runIds[i]!, v as BulkOutcome);
    });
    return found;
  }

  async write(actionId: string, outcomes: ReadonlyMap<string, BulkOutcome>): Promise<void> {
    if (outcomes.size === 0) return;
    const key = this.keyOf(actionId);
    await this.redis.multi().hset(key, Object.fromEntries(outcomes)).expire(key, KEPT_S).exec();
  }

  private keyOf(actionId: string): string {
    return `${this.prefix}:bulk:${actionId}`;
  }
}
