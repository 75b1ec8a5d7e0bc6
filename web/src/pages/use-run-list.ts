/**
 * The run list's data: pages of runs from `GET /v1/runs` (loaded as the list scrolls), counts by
 * status from `GET /v1/runs/counts`, and runs as they start and change from `GET /v1/runs/events`,
 * merged in without reloading (the feed carries each run's tags, so a tag filter applies to it
 * too). The feed is opened first and the list read once it is open, so no change falls between
 * the two.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { summaryOf } from '../../../src/run-backend/run-changes.js';
import { openStream } from '../sse';
import type { RunCounts, RunPage, RunRecord, RunStatus, RunSummary } from '../types';

/** What the list shows. */
export interface ListFilter {
  status?: RunStatus;
  directive?: string;
  /** Epoch ms. */
  since?: number;
  /** Tags every run has, each written `name:value`. */
  tags?: string[];
}

/** A run as the list shows it: its summary, and the few words its inputs are said in. */
export type ListRun = RunSummary;

/** The {@link ListRun} of a record. */
export function listRunOf(r: RunRecord): ListRun {
  return { ...summaryOf(r), ...(r.summary !== undefined && { summary: r.summary }) };
}

const PAGE = 100;

function matches(r: RunSummary, f: ListFilter): boolean {
  return (
    (f.status === undefined || r.status === f.status) &&
    (f.directive === undefined || r.directive === f.directive) &&
    (f.since === undefined || r.startedAt >= f.since) &&
    (f.tags ?? []).every((t) => {
      const at = t.indexOf(':');
      return r.tags?.[t.slice(0, at)] === t.slice(at + 1);
    })
  );
}

const newestFirst = (a: RunSummary, b: RunSummary) =>
  b.startedAt - a.startedAt || (a.runId < b.runId ? 1 : -1);

/** The query string of `GET /v1/runs` for `filter` (a tag is repeated, one per tag). */
export function listQuery(filter: ListFilter, extra: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  if (filter.status) q.set('status', filter.status);
  if (filter.directive) q.set('directive', filter.directive);
  if (filter.since !== undefined) q.set('since', String(filter.since));
  for (const t of filter.tags ?? []) q.append('tag', t);
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) q.set(k, v);
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

/** See the module comment. */
export function useRunList(filter: ListFilter) {
  const [runs, setRuns] = useState<ListRun[]>([]);
  const [counts, setCounts] = useState<RunCounts | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [loading, setLoading] = useState(true);
  const next = useRef<string | undefined>(undefined);
  const busy = useRef(false);
  const generation = useRef(0);
  const key = JSON.stringify(filter);

  const countsQuery = listQuery(
    { directive: filter.directive, since: filter.since, tags: filter.tags },
    {},
  );
  const loadCounts = useCallback(() => {
    api<RunCounts>('GET', `/v1/runs/counts${countsQuery}`).then(setCounts, () => undefined);
  }, [countsQuery]);

  const loadPage = useCallback(
    async (first: boolean) => {
      if (busy.current || (!first && next.current === undefined)) return;
      busy.current = true;
      const gen = generation.current;
      try {
        const page = await api<RunPage>(
          'GET',
          `/v1/runs${listQuery(filter, { limit: String(PAGE), cursor: first ? undefined : next.current })}`,
        );
        if (gen !== generation.current) return;
        next.current = page.next;
        const loaded = page.runs.map(listRunOf);
        setRuns((had) => {
          const byId = new Map<string, ListRun>();
          // On a first page, runs the feed told of meanwhile keep their newer status.
          for (const r of first ? [...loaded, ...had] : had) byId.set(r.runId, r);
          if (!first) for (const r of loaded) if (!byId.has(r.runId)) byId.set(r.runId, r);
          return [...byId.values()].sort(newestFirst);
        });
        setError(undefined);
      } catch (e) {
        setError((e as Error).message);
      } finally {
        busy.current = false;
        setLoading(false);
      }
    },
    [key],
  );

  useEffect(() => {
    generation.current++;
    next.current = undefined;
    busy.current = false;
    setRuns([]);
    setLoading(true);
    let countTimer: number | undefined;
    const stop = openStream('/v1/runs/events', {
      onEvent: ({ event, data }) => {
        if (event === 'runs.open') {
          void loadPage(true);
          loadCounts();
          return;
        }
        if (event !== 'runs.changed') return;
        const changed = (data as { runs: RunSummary[] }).runs;
        setRuns((had) => merge(had, changed, filter));
        countTimer ??= window.setTimeout(() => {
          countTimer = undefined;
          loadCounts();
        }, 1000);
      },
    });
    return () => {
      stop();
      clearTimeout(countTimer);
    };
  }, [key]);

  return {
    runs,
    counts,
    error,
    loading,
    hasMore: () => next.current !== undefined,
    loadMore: () => void loadPage(false),
  };
}

/** `had` with the `changed` runs updated, and those new to it that match `filter` added. */
function merge(had: ListRun[], changed: RunSummary[], filter: ListFilter): ListRun[] {
  const byId = new Map(changed.map((r) => [r.runId, r]));
  let out = had.map((r) => {
    const now = byId.get(r.runId);
    if (now === undefined) return r;
    byId.delete(r.runId);
    return { ...r, ...now };
  });
  if (filter.status !== undefined) out = out.filter((r) => r.status === filter.status);
  const oldest = had.at(-1)?.startedAt ?? -Infinity;
  const added = [...byId.values()].filter((r) => matches(r, filter) && r.startedAt >= oldest);
  return added.length === 0 ? out : [...added, ...out].sort(newestFirst);
}
