/**
 * Errors of a Redis deployment and what it lends: a Redis that does not answer, an operation only
 * a deployment offers, and the keyed locks and rate limits kept in Redis.
 */
import { DirigentError } from './dirigent-error.js';
import { ErrorCode } from './error-codes.js';

/**
 * Who found Redis down, for {@link redisUnavailable}: a client (`Dirigent.open`, the CLI, the
 * API server), which could run embedded instead, or a worker, which serves a deployment and
 * cannot.
 */
export type RedisUser = 'client' | 'worker';

/**
 * `REDIS_UNAVAILABLE`: Redis at `printableUrl` (its password hidden: `printableRedisUrl`) does
 * not answer. Retryable for a worker (a supervisor starting it again may find Redis up), fatal
 * for a client, which is told that it could run embedded.
 */
export function redisUnavailable(printableUrl: string, user: RedisUser): DirigentError {
  return new DirigentError(
    ErrorCode.REDIS_UNAVAILABLE,
    `Redis at ${printableUrl} does not answer; start redis-server or set REDIS_URL.`,
    {
      retryable: user === 'worker',
      hint:
        user === 'worker'
          ? 'Start redis-server, or give the URL of the deployment that runs.'
          : 'Without a Redis URL, runs are embedded in this process.',
      details: { url: printableUrl },
    },
  );
}

/**
 * `NEEDS_REDIS`: `what` (`Schedules`, `A worker`) needs a Redis deployment, and none was given.
 * `why` says what the deployment does for it.
 */
export function needsRedis(what: string, why: string): DirigentError {
  return DirigentError.fatal(ErrorCode.NEEDS_REDIS, `${what} needs a Redis deployment: ${why}.`, {
    hint: 'Give the Redis URL (`--redis <url>`, the `redis` option) or set REDIS_URL.',
  });
}

/**
 * `LOCK_UNAVAILABLE` (retryable): Redis could not be asked for the lock or rate limit `key`;
 * `what` says what was asked (`Could not ask Redis for the rate limit 'k'`), `err` what went wrong.
 */
export function lockUnavailable(what: string, key: string, err: unknown): DirigentError {
  const reason = err instanceof Error ? err.message : String(err);
  return DirigentError.retryable(ErrorCode.LOCK_UNAVAILABLE, `${what}: ${reason}`, {
    cause: err,
    details: { key },
    hint: 'Check that Redis answers; the job can be tried again.',
  });
}

/**
 * `LOCK_LOST` (retryable): a held lock or lease, `what` (`the concurrency lock 'k'`, `the lease
 * on k`), was lost for `why`. The work holding it should stop, since another may hold it now.
 */
export function lockLost(
  what: string,
  why: string,
  lock: { key: string; leaseMs: number },
): DirigentError {
  return DirigentError.retryable(ErrorCode.LOCK_LOST, `Lost ${what}: ${why}.`, {
    hint: 'The work stops, since another may hold the lock now; it is tried again later.',
    details: { key: lock.key, leaseMs: lock.leaseMs },
  });
}
