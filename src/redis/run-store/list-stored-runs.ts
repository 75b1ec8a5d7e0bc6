/**
 * Listing runs from a {@link RedisRunStore}'s indexes: newest first, filtered, in pages.
 */
import type { RedisClient } from '../redis-client.js';
import { RUN_STATUSES, type RunRecord, type RunStatus } from '../../engine/run-record.js';
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
  indexKey(by: IndexOf): string;
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
  let index = candidates[0];
  if (candidates.length > 1) {
    const sizes = await Promise.all(candidates.map((key) => store.redis.zcard(key)));
    index = candidates[sizes.indexOf(Math.min(...sizes))]!;
  }
  const out: RunRecord[] = [];
  const seen = new Set<string>();
  const dangling: string[] = [];
  const after = filter.after;
  const range: ScoreRange = {
    max: score(Math.min(filter.until ?? Infinity, after?.startedAt ?? Infinity)),
    min: score(filter.since ?? -Infinity),
  };
  // Every run is in the index of its status: all runs are the status indexes merged.
  const pages =
    index === undefined
      ? mergedPages(
          store.redis,
          STORED_STATUSES.map((s) => store.indexKey({ status: s })),
          range,
          // Each entry of the merge is a run listed (unless it expired): no more are needed.
          Math.min(LIST_PAGE, Math.ceil(limit)),
        )
      : indexPages(store.redis, index, range);
  for await (const page of pages) {
    const ids: string[] = [];
    for (const [id, startedAt] of page) {
      if (after && startedAt === after.startedAt && id >= after.runId) continue;
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
    if (out.length >= limit) break;
  }
  await Promise.all(dangling.map((id) => store.forgetDangling(id, directive)));
  return out;
}

/** The statuses a stored run can have: each has an index, and every run is in one. */
const STORED_STATUSES = RUN_STATUSES.filter((s) => s !== 'queued');

/** Bounds of start times, as `ZREVRANGEBYSCORE` takes them. */
interface ScoreRange {
  max: string;
  min: string;
}

/** An index entry: a run id and its start time. */
type Entry = [runId: string, startedAt: number];

function score(n: number): string {
  return n === Infinity ? '+inf' : n === -Infinity ? '-inf' : String(n);
}

/** A `WITHSCORES` reply as entries. */
function entriesOf(flat: readonly string[]): Entry[] {
  const entries: Entry[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) entries.push([flat[i]!, Number(flat[i + 1])]);
  return entries;
}

/**
 * The entries of index `key` within `range`, newest first, a page at a time. A sorted set orders
 * equal scores by id, so newest first means equal start times in descending id order.
 */
async function* indexPages(
  redis: RedisClient,
  key: string,
  range: ScoreRange,
): AsyncGenerator<Entry[]> {
  for (let start = 0; ; start += LIST_PAGE) {
    const page = await redis.zrevrangebyscore(
      key,
      range.max,
      range.min,
      'WITHSCORES',
      'LIMIT',
      start,
      LIST_PAGE,
    );
    if (page.length > 0) yield entriesOf(page);
    if (page.length < LIST_PAGE * 2) return;
  }
}

/** Whether entry `a` comes before `b` newest first (equal start times: the greater id first). */
function before(a: Entry, b: Entry): boolean {
  return a[1] !== b[1] ? a[1] > b[1] : a[0] > b[0];
}

/**
 * The entries of several indexes within `range` as one index would list them, newest first, in
 * pages of `size`: each index read `size` entries at a time (all at once, in one round trip), the
 * pages merged, and an index read further only once what was read of it has been taken.
 */
async function* mergedPages(
  redis: RedisClient,
  keys: readonly string[],
  range: ScoreRange,
  size: number,
): AsyncGenerator<Entry[]> {
  const heads = keys.map((key) => ({ key, start: 0, read: [] as Entry[], done: false }));
  const fill = async (which: typeof heads) => {
    const pipeline = redis.pipeline();
    for (const h of which)
      pipeline.zrevrangebyscore(h.key, range.max, range.min, 'WITHSCORES', 'LIMIT', h.start, size);
    const replies = (await pipeline.exec()) ?? [];
    which.forEach((h, i) => {
      const [err, flat] = replies[i] ?? [];
      if (err) throw err;
      const page = flat as string[];
      h.read = entriesOf(page);
      h.start += size;
      h.done = page.length < size * 2;
    });
  };
  for (;;) {
    const page: Entry[] = [];
    while (page.length < size) {
      // An index whose page was all taken is read further before any entry is taken, so that
      // none comes out of order.
      const spent = heads.filter((h) => h.read.length === 0 && !h.done);
      if (spent.length > 0) await fill(spent);
      let next: (typeof heads)[number] | undefined;
      for (const h of heads)
        if (h.read.length > 0 && (next === undefined || before(h.read[0]!, next.read[0]!)))
          next = h;
      if (next === undefined) break;
      page.push(next.read.shift()!);
    }
    if (page.length > 0) yield page;
    if (page.length < size) return;
  }
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
