/**
 * Keyed rate limits: at most `max` admitted calls per key in any window of `durationMs`, across
 * every process that shares the Redis.
 *
 * Algorithm: a sliding window log. Each key is a sorted set of the admitted calls, scored by
 * Redis's own clock (`TIME`, in microseconds, so the workers' clocks do not matter). One Lua
 * script, atomic in Redis, prunes the entries older than the window, admits the call when fewer
 * than `max` remain, and otherwise answers when the oldest one leaves the window. Refused calls
 * are not logged, so callers retrying do not push the window forward. Chosen over GCRA because it
 * is exact: GCRA smooths calls out and lets through up to about `2 · max` in some windows of
 * `durationMs`, while the log never admits more than `max` in any window; its cost is one entry per
 * admitted call (hence the bound on `max` in the spec).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { KeySpace } from './key-space.js';
import type { RedisClient } from '../redis/redis-client.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { lockUnavailable } from '../errors/deployment-errors.js';

/** The answer of {@link tryConsume}. */
export type RateDecision = { ok: true } | { ok: false; retryAfterMs: number };

/**
 * KEYS[1] the log; ARGV[1] max, ARGV[2] window in ms, ARGV[3] a unique member.
 * Returns {1, 0} when admitted, {0, µs until the oldest entry leaves the window} when not.
 */
const SCRIPT = `
local key = KEYS[1]
local max = tonumber(ARGV[1])
local window = tonumber(ARGV[2]) * 1000
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
-- Formatted by hand: Lua would pass these 16-digit numbers to Redis with 14 significant digits.
redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.0f', now - window))
if redis.call('ZCARD', key) < max then
  redis.call('ZADD', key, string.format('%.0f', now), ARGV[3])
  redis.call('PEXPIRE', key, ARGV[2])
  return {1, 0}
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {0, tonumber(oldest[2]) + window - now}
`;
const SHA = createHash('sha1').update(SCRIPT).digest('hex');

/**
 * The Redis key of the log behind the rate `key` in `space`: a deployment's layout names it
 * (`redis/shards/shard-layout.ts`: its own hash slot on a cluster), or it is `<prefix>:rate:<key>`
 * under a prefix (a trailing `:` on the prefix is not doubled).
 */
export function rateRedisKey(space: KeySpace, key: string): string {
  if (typeof space !== 'string') return space.globalKey('rate', key);
  return `${space.endsWith(':') ? space : `${space}:`}rate:${key}`;
}

/**
 * Admits one call under the rate `key` if fewer than `max` were admitted in the last
 * `durationMs`: `{ ok: true }`, the call counted; or `{ ok: false, retryAfterMs }`, nothing
 * counted, where `retryAfterMs` (at least 1) is when the oldest admitted call leaves the window
 * and frees a place. Other callers may take that place first; the answer is a lower bound.
 *
 * Throws a retryable `LOCK_UNAVAILABLE` {@link DirigentError} when Redis does not answer.
 */
export async function tryConsume(
  redis: RedisClient,
  space: KeySpace,
  key: string,
  max: number,
  durationMs: number,
): Promise<RateDecision> {
  checkArguments(key, max, durationMs);
  const args = [rateRedisKey(space, key), max, durationMs, randomUUID()] as const;
  let reply: unknown;
  try {
    try {
      reply = await redis.evalsha(SHA, 1, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      reply = await redis.eval(SCRIPT, 1, ...args);
    }
  } catch (err) {
    throw lockUnavailable(`Could not ask Redis for the rate limit '${key}'`, key, err);
  }
  const [admitted, waitUs] = reply as [number, number];
  if (Number(admitted) === 1) return { ok: true };
  return { ok: false, retryAfterMs: Math.max(1, Math.ceil(Number(waitUs) / 1000)) };
}

function checkArguments(key: string, max: number, durationMs: number): void {
  const wrong =
    typeof key !== 'string' || key === ''
      ? `key must be a non-empty string, not ${JSON.stringify(key)}`
      : !Number.isSafeInteger(max) || max < 1
        ? `max must be an integer of at least 1, not ${max}`
        : !Number.isSafeInteger(durationMs) || durationMs < 1
          ? `durationMs must be an integer of at least 1, not ${durationMs}`
          : undefined;
  if (wrong !== undefined)
    throw DirigentError.fatal(ErrorCode.INTERNAL, `tryConsume: ${wrong}.`, {
      details: { key, max, durationMs },
    });
}
