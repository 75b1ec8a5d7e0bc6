/**
 * How many shards a deployment has: chosen by its configuration, and recorded in Redis by the
 * first process that opens it, so that every later process agrees or is refused. A process that
 * counted differently would look for runs on the wrong shards and strand them: changing the
 * number is a move to a new prefix (see `docs/scaling.md`), never a restart with another count.
 */
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { loadProjectPolicy } from '../../policy/project-policy.js';
import type { RedisClient } from '../redis-client.js';
import { parseRedisUrl } from '../redis-endpoint.js';
import { MAX_SHARDS, ShardLayout } from './shard-layout.js';

/**
 * The number of shards chosen: `given` (an option), else `DIRIGENT_SHARDS`, else the project's
 * `shards` (`.ai/config/dirigent.yaml`), else 1. `INVALID_CONFIG` for a value that is not a whole
 * number from 1 to {@link MAX_SHARDS}.
 */
export function chosenShardCount(
  given: number | undefined,
  projectDir: string,
  env: Record<string, string | undefined> = process.env,
): number {
  if (given !== undefined) return checked(given, 'The shards option');
  const raw = env.DIRIGENT_SHARDS;
  if (raw !== undefined && raw.trim() !== '')
    return checked(/^\d+$/.test(raw.trim()) ? Number(raw) : NaN, `DIRIGENT_SHARDS ("${raw}")`);
  return loadProjectPolicy(projectDir, env).shards ?? 1;
}

function checked(n: number, what: string): number {
  if (Number.isInteger(n) && n >= 1 && n <= MAX_SHARDS) return n;
  throw DirigentError.fatal(
    ErrorCode.INVALID_CONFIG,
    `${what} must be a whole number from 1 to ${MAX_SHARDS}.`,
    { hint: 'Give the number of shards the deployment spreads its runs over (1 on one Redis).' },
  );
}

/** The layout of `count` shards under `prefix` on the Redis `url` names. */
export function layoutFor(url: string, prefix: string, count: number): ShardLayout {
  return new ShardLayout(prefix, count, parseRedisUrl(url).kind === 'cluster');
}

/** The key recording a deployment's number of shards: one per prefix, whatever the count. */
function countKey(layout: ShardLayout): string {
  return `${layout.prefix.replace(/[{}]/g, '')}:shards`;
}

/**
 * Records the layout's number of shards if none is recorded yet, else checks it is the one
 * recorded: `INVALID_CONFIG` naming both when it is not.
 */
export async function agreeOnShardCount(redis: RedisClient, layout: ShardLayout): Promise<void> {
  const key = countKey(layout);
  if ((await redis.set(key, String(layout.count), 'NX')) === 'OK') return;
  const recorded = await redis.get(key);
  if (recorded === null || Number(recorded) === layout.count) return;
  throw DirigentError.fatal(
    ErrorCode.INVALID_CONFIG,
    `The deployment under prefix "${layout.prefix}" has ${recorded} shard(s), and this process was given ${layout.count}: its runs would be looked for on the wrong shards.`,
    {
      hint: `Give DIRIGENT_SHARDS=${recorded} (or \`shards: ${recorded}\`), or move to ${layout.count} shards under a new prefix: see docs/scaling.md.`,
      details: { recorded: Number(recorded), given: layout.count, key },
    },
  );
}
