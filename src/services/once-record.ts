import type { RedisClient } from '../redis/redis-client.js';
import type { SerializedError } from '../errors/dirigent-error.js';

/**
 * What a deployment knows of one version of a `once` bootstrap tool, stored as JSON under
 * `bootstrapKeys.once(...)`: `running` while a worker holds the claim (the key then has a TTL the
 * worker renews), `done` or `failed` for good once it ended (no TTL).
 */
export interface OnceRecord {
  state: 'running' | 'done' | 'failed';
  /** The worker that holds the claim or ran the tool: `host:pid`. */
  worker: string;
  /** Random id of the claim, which the holder compares before renewing or settling it. */
  claim: string;
  started_at: string;
  finished_at?: string;
  /** Why it failed (`failed` only). */
  error?: SerializedError;
}

/** The record at `key`; `undefined` when there is none (never claimed, or the claim expired). */
export async function readOnceRecord(
  redis: RedisClient,
  key: string,
): Promise<OnceRecord | undefined> {
  const text = await redis.get(key);
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as OnceRecord;
  } catch {
    return { state: 'failed', worker: 'unknown', claim: '', started_at: '' };
  }
}
