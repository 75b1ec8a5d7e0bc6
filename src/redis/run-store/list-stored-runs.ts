/**
 * Listing runs from a {@link RedisRunStore}'s indexes: newest first, filtered, in pages.
 */
import type { RedisClient } from '../redis-client.js';
import type { RunRecord, RunStatus } from '../../engine/run-record.js';
import { hasTags } from '../../engine/run-tags.js';
import { recordOf } from './run-hash.js';

/** Index entries read per round trip. */
const LIST_PAGE = 200;

/** What an index holds: the runs with a status, of a directive, or with a tag (name, value). */
export type IndexOf = { status: RunStatus } | { directive: string } | { tag: [string, string] };

/** What listing needs of a store: its connection, its keys, and forgetting an expired run. */
export interface RunIndexes {
  readonly redis: RedisClient;
  runKey(runId: string): string;
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
    const pipeline = store.redis.pipeline();
    for (const id of ids) pipeline.hgetall(store.runKey(id));
    const rows = (await pipeline.exec()) ?? [];
    for (const [i, id] of ids.entries()) {
      const [err, row] = rows[i] ?? [];
      if (err) throw err;
      const hash = row as Record<string, string>;
      if (hash.record === undefined) dangling.push(id);
      else if (seen.has(id) || (status !== undefined && hash.status !== status)) continue;
      else if (directive !== undefined && hash.directive !== directive) continue;
      else {
        const record = recordOf(hash);
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
