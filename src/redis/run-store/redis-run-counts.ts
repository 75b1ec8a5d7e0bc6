/**
 * Counting the runs of a Redis deployment by status, from the run store's indexes (see
 * `redis/run-store/run-hash.ts`): one `ZCOUNT` per status index, or, for one directive, its index's entries
 * with each run's plain `status` field (pipelined, a thousand at a time). Runs still queued are not
 * stored yet and not counted; an expired run whose index entries were not retired yet may be, for
 * the moments until the store retires them.
 */
import type { RunStatus } from '../../engine/run-record.js';
import type { RedisRunStore } from './redis-run-store.js';
import { RUN_STATUSES } from '../../engine/run-record.js';
import { noCounts, type CountFilter, type RunCounts } from '../../run-backend/run-counts.js';

const STORED = RUN_STATUSES.filter((s): s is Exclude<RunStatus, 'queued'> => s !== 'queued');
const CHUNK = 1000;

/** See the module comment. */
export async function countStoredRuns(
  store: RedisRunStore,
  filter: CountFilter,
): Promise<RunCounts> {
  const min = filter.since ?? '-inf';
  const max = filter.until ?? '+inf';
  const counts = noCounts();
  const add = (status: string | null, n: number) => {
    if (status === null || !(STORED as string[]).includes(status)) return;
    counts.byStatus[status as RunStatus] += n;
    counts.total += n;
  };
  if (filter.directive === undefined && filter.tags === undefined) {
    const pipeline = store.redis.pipeline();
    for (const status of STORED) pipeline.zcount(store.indexKey({ status }), min, max);
    const replies = (await pipeline.exec()) ?? [];
    STORED.forEach((status, i) => add(status, Number(answer(replies[i]))));
    return counts;
  }
  // One index (the directive's, or a tag's) read whole, each run's status and other marks looked
  // up: tags are matched against the run's `tags` field.
  const [name, value] = Object.entries(filter.tags ?? {})[0] ?? [];
  const index =
    filter.directive !== undefined
      ? store.indexKey({ directive: filter.directive })
      : store.indexKey({ tag: [name!, value!] });
  const ids = await store.redis.zrangebyscore(index, min, max);
  const wanted = Object.entries(filter.tags ?? {}).map(([n, v]) => `${n}=${v}`);
  for (let at = 0; at < ids.length; at += CHUNK) {
    const pipeline = store.redis.pipeline();
    for (const id of ids.slice(at, at + CHUNK))
      pipeline.hmget(store.runKey(id), 'status', 'directive', 'tags');
    for (const reply of (await pipeline.exec()) ?? []) {
      const [status, directive, tags] = answer(reply) as (string | null)[];
      if (filter.directive !== undefined && directive !== filter.directive) continue;
      const lines = (tags ?? '').split('\n');
      if (!wanted.every((t) => lines.includes(t))) continue;
      add(status ?? null, 1);
    }
  }
  return counts;
}

/** The value of one pipelined reply; its error, thrown. */
export function answer(reply: [Error | null, unknown] | undefined): unknown {
  if (reply?.[0]) throw reply[0];
  return reply?.[1];
}
