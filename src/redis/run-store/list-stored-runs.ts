/**
 * Listing runs from a {@link RedisRunStore}'s indexes: newest first, filtered, in pages.
 */
import type { RedisClient } from '../redis-client.js';
import type { RunRecord, RunStatus } from '../../engine/run-record.js';
import { hasTags } from '../../engine/run-tags.js';
import { holdsRun, recordOf } from './run-hash.js';
import { BODY_FIELD, ID_FIELD } from './run-store-lua.js';

/** Index entries read per round trip. */
const LIST_PAGE = 200;

/** What an index holds: the runs with a status, of a directive, or with a tag (name, value). */
export type IndexOf = { status: RunStatus } | { directive: string } | { tag: [string, string] };

/** What listing needs of a store: its connection, its keys, and forgetting an expired run. */
export interface RunIndexes {
  readonly redis: RedisClient;
  runKey(runId: string): string;
  bodyKey(runId: string): string;
  indexKey(by?: IndexOf): string;
  /** Removes the index entries of a run whose hash is gone. */
  forgetDangling(runId: string, directive?: string): Promise<unknown>;
}

/** Which runs {@link RedisRunStore.list} returns. */
export interface RunListFilter {
  status?: RunStatus;
  /** The directive's name, as in {@link RunRecord.directive}. */
  directive?: string;
  /** Only runs with every one of these tags. */
  tags?: Record<string, string>;
  /** At most this many runs (the newest). */
  limit?: number;
  /** Only runs started at or after this time (epoch ms). */
  since?: number;
  /** Only runs started at or before this time (epoch ms). */
  until?: number;
  /** Only runs after this one in the list (newest first): where the previous page ended. */
  after?: RunCursor;
}

/** A place in a list of runs, newest first: a run's start time and id. */
export interface RunCursor {
  startedAt: number;
  runId: string;
}

/**
 * Run records, newest first (by `startedAt`), optionally only those with a status and/or of a
 * directive, at most `limit`. Index entries whose run has expired are skipped and removed.
 */
export async function listStoredRuns(
  store: RunIndexes,
  filter: RunListFilter = {},
): Promise<RunRecord[]> {
  const limit = filter.limit ?? Infinity;
  if (!(limit > 0)) return [];
  const { status, directive, tags } = filter;
  // The smallest index that holds every run asked for; the other conditions are checked on each.
  const candidates = [
    ...(status === undefined ? [] : [store.indexKey({ status })]),
    ...(directive === undefined ? [] : [store.indexKey({ directive })]),
    ...Object.entries(tags ?? {}).map((tag) => store.indexKey({ tag })),
  ];
  let index = candidates[0] ?? store.indexKey();
  if (candidates.length > 1) {
    const sizes = await Promise.all(candidates.map((key) => store.redis.zcard(key)));
    index = candidates[sizes.indexOf(Math.min(...sizes))]!;
  }
  const out: RunRecord[] = [];
  const seen = new Set<string>();
  const dangling: string[] = [];
  // Indexes are sorted sets scored by start time; equal scores come in descending id order.
  const after = filter.after;
  const max = Math.min(filter.until ?? Infinity, after?.startedAt ?? Infinity);
  const min = filter.since ?? -Infinity;
  const score = (n: number) => (n === Infinity ? '+inf' : n === -Infinity ? '-inf' : String(n));
  for (let start = 0; out.length < limit; start += LIST_PAGE) {
    const page = await store.redis.zrevrangebyscore(
      index,
      score(max),
      score(min),
      'WITHSCORES',
      'LIMIT',
      start,
      LIST_PAGE,
    );
    if (page.length === 0) break;
    const ids: string[] = [];
    for (let i = 0; i < page.length; i += 2) {
      const id = page[i]!;
      if (after && Number(page[i + 1]) === after.startedAt && id >= after.runId) continue;
      ids.push(id);
    }
    const hashes = await readRunHashes(store, ids, true);
    for (const [i, id] of ids.entries()) {
      const hash = hashes[i]!;
      if (!holdsRun(hash)) dangling.push(id);
      else if (seen.has(id) || (status !== undefined && hash.status !== status)) continue;
      else if (directive !== undefined && hash.directive !== directive) continue;
      else {
        const record = recordOf(hash)!;
        if (!hasTags(record, tags)) continue;
        seen.add(id);
        out.push(record);
        if (out.length >= limit) break;
      }
    }
    if (page.length < LIST_PAGE * 2) break;
  }
  await Promise.all(dangling.map((id) => store.forgetDangling(id, directive)));
  return out;
}

/** The fields of a run's hash that hold its record, when it was stored before the body. */
const RECORD_FIELDS = ['status', 'directive', 'record'] as const;

/**
 * The hashes of runs `ids` (each with its id and body under `ID_FIELD` and `BODY_FIELD`, as the
 * read scripts answer them), in one round trip, as
 * {@link recordOf} reads a record from: whole with `withSteps` (the entries of the record's
 * `steps` list and the `tags` field too), else only what the record needs besides (its `steps`
 * read empty). A run not stored reads as an empty hash.
 */
export async function readRunHashes(
  store: Pick<RunIndexes, 'redis' | 'runKey' | 'bodyKey'>,
  ids: readonly string[],
  withSteps: boolean,
): Promise<Record<string, string | undefined>[]> {
  if (ids.length === 0) return [];
  const pipeline = store.redis.pipeline();
  for (const id of ids) {
    if (withSteps) pipeline.hgetall(store.runKey(id));
    else pipeline.hmget(store.runKey(id), ...RECORD_FIELDS);
    pipeline.get(store.bodyKey(id));
  }
  const replies = (await pipeline.exec()) ?? [];
  return ids.map((_, i) => {
    const [hashErr, fields] = replies[2 * i] ?? [];
    const [bodyErr, body] = replies[2 * i + 1] ?? [];
    if (hashErr) throw hashErr;
    if (bodyErr) throw bodyErr;
    const hash: Record<string, string | undefined> = withSteps
      ? { ...(fields as Record<string, string>) }
      : Object.fromEntries(
          RECORD_FIELDS.map((name, k) => [name, (fields as (string | null)[])[k] ?? undefined]),
        );
    hash[ID_FIELD] = ids[i];
    if (typeof body === 'string') hash[BODY_FIELD] = body;
    return hash;
  });
}
