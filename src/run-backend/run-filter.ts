/** Which runs a list asks for, a page at a time, newest first. */
import { RUN_STATUSES, type RunRecord, type RunStatus } from '../engine/run-record.js';
import { didYouMean } from '../errors/did-you-mean.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { checkTags, hasTags } from '../engine/run-tags.js';
import type { RunCursor } from '../redis/run-store/redis-run-store.js';

/** What {@link Dirigent.list} takes. */
export interface RunFilter {
  status?: RunStatus;
  /** The directive's item id. */
  directive?: string;
  /** Only runs with every one of these tags (name → value). */
  tags?: Record<string, string>;
  /** Only runs started at or after this time (epoch ms). */
  since?: number;
  /** Only runs started at or before this time (epoch ms). */
  until?: number;
  /** At most this many runs (default 50, at most 1000). */
  limit?: number;
  /** Where the previous page ended ({@link RunPage.next}). */
  cursor?: string;
}

/** One page of runs, newest first, and the cursor of the next page when there is one. */
export interface RunPage {
  runs: RunRecord[];
  next?: string;
}

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 1000;

/** A cursor as a list hands it out: opaque to callers. */
export function encodeCursor(record: RunRecord): string {
  return Buffer.from(JSON.stringify([record.startedAt, record.runId])).toString('base64url');
}

/** The place a cursor names; `INVALID_REQUEST` for one no list handed out. */
export function decodeCursor(cursor: string): RunCursor {
  try {
    const [startedAt, runId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [
      unknown,
      unknown,
    ];
    if (typeof startedAt === 'number' && typeof runId === 'string') return { startedAt, runId };
  } catch {
    // reported below
  }
  throw DirigentError.fatal(
    ErrorCode.INVALID_REQUEST,
    `"${cursor}" is not a cursor of a run list.`,
    {
      hint: 'Pass the `next` value of the previous page as it was, or leave the cursor out for the first page.',
    },
  );
}

/**
 * Refuses, with `INVALID_REQUEST` listing what is accepted, a filter whose status is none a run
 * can have (a list filtered by it would be empty, and a typo would pass unnoticed).
 */
export function checkRunFilter(filter: RunFilter): void {
  if (filter.status !== undefined && !RUN_STATUSES.includes(filter.status)) {
    throw DirigentError.fatal(
      ErrorCode.INVALID_REQUEST,
      `"${String(filter.status)}" is not a run status.${didYouMean(String(filter.status), RUN_STATUSES)}`,
      { hint: `Statuses: ${RUN_STATUSES.join(', ')}.`, details: { statuses: RUN_STATUSES } },
    );
  }
  if (filter.tags !== undefined) checkTags(filter.tags);
  pageSize(filter);
}

/** The page size a filter asks for, checked. */
export function pageSize(filter: RunFilter): number {
  const limit = filter.limit ?? DEFAULT_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE)
    throw DirigentError.fatal(
      ErrorCode.INVALID_REQUEST,
      `A page holds 1 to ${MAX_PAGE} runs, not ${String(filter.limit)}.`,
      { hint: `Ask for a limit between 1 and ${MAX_PAGE}, and follow \`next\` for more.` },
    );
  return limit;
}

/**
 * Filters and pages records in memory (newest first), as the embedded store needs: the Redis
 * store does the same in Redis.
 */
export function pageOf(records: Iterable<RunRecord>, filter: RunFilter): RunPage {
  const limit = pageSize(filter);
  const after = filter.cursor === undefined ? undefined : decodeCursor(filter.cursor);
  const kept = [...records]
    .filter(
      (r) =>
        (filter.status === undefined || r.status === filter.status) &&
        (filter.directive === undefined || r.directive === filter.directive) &&
        hasTags(r, filter.tags) &&
        (filter.since === undefined || r.startedAt >= filter.since) &&
        (filter.until === undefined || r.startedAt <= filter.until) &&
        (after === undefined || isAfter(r, after)),
    )
    .sort((a, b) => b.startedAt - a.startedAt || (a.runId < b.runId ? 1 : -1));
  return pageFrom(kept.slice(0, limit + 1), limit);
}

/** A page from up to `limit + 1` records in list order: one more means there is a next page. */
export function pageFrom(records: RunRecord[], limit: number): RunPage {
  if (records.length <= limit) return { runs: records };
  const runs = records.slice(0, limit);
  return { runs, next: encodeCursor(runs[runs.length - 1]!) };
}

/** Whether `r` comes after the cursor in a list that is newest first (ties: id descending). */
function isAfter(r: RunRecord, c: RunCursor): boolean {
  return r.startedAt < c.startedAt || (r.startedAt === c.startedAt && r.runId < c.runId);
}
