/** How many runs a list holds, by status: the counts a console shows above its list. */
import { RUN_STATUSES, type RunRecord, type RunStatus } from '../engine/run-record.js';
import type { RunFilter } from './run-filter.js';
import { hasTags } from '../engine/run-tags.js';

/** Which runs {@link Dirigent.counts} counts: a list's filter without status or paging. */
export type CountFilter = Pick<RunFilter, 'directive' | 'tags' | 'since' | 'until'>;

/** How many runs match a {@link CountFilter}: in all, and by status. */
export interface RunCounts {
  total: number;
  byStatus: Record<RunStatus, number>;
}

/** Counts with every status at 0. */
export function noCounts(): RunCounts {
  return {
    total: 0,
    byStatus: Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>,
  };
}

/** Counts `records` that match `filter`, in memory (the embedded store). */
export function countRecords(
  records: Iterable<Pick<RunRecord, 'status' | 'directive' | 'startedAt' | 'tags'>>,
  filter: CountFilter,
): RunCounts {
  const counts = noCounts();
  for (const r of records) {
    if (filter.directive !== undefined && r.directive !== filter.directive) continue;
    if (filter.since !== undefined && r.startedAt < filter.since) continue;
    if (filter.until !== undefined && r.startedAt > filter.until) continue;
    if (!hasTags(r, filter.tags)) continue;
    counts.byStatus[r.status]++;
    counts.total++;
  }
  return counts;
}
