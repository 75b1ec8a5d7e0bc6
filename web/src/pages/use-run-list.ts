/**
 * The run list's data: pages of runs from `GET /v1/runs` (loaded as the list scrolls), counts by
 * status from `GET /v1/runs/counts`, and runs as they start and change from `GET /v1/runs/events`,
 * merged in without reloading. The feed is opened first and the list read once it is open, so no
 * change falls between the two.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, query } from '../api';
import { summaryOf } from '../../../src/run-backend/run-changes.js';
import { openStream } from '../sse';
import type { RunCounts, RunPage, RunStatus, RunSummary } from '../types';

/** What the list shows. */
export interface ListFilter {
  status?: RunStatus;
  directive?: string;
  /** Epoch ms. */
  since?: number;
}

const PAGE = 100;

function matches(r: RunSummary, f: ListFilter): boolean {
  return (
    (f.status === undefined || r.status === f.status) &&
    (f.directive === undefined || r.directive === f.directive) &&
    (f.since === undefined || r.startedAt >= f.since)
  );
}

const newestFirst = (a: RunSummary, b: RunSummary) =>
  b.startedAt - a.startedAt || (a.runId < b.runId ? 1 : -1);

/** See the module comment. */
export function useRunList(filter: ListFilter) {
  const [runs, setRuns] = useState<RunSummary[]>([]);
  const [counts, setCounts] = useState<RunCounts | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [loading, setLoading] = useState(true);
  const next = useRef<string | undefined>(undefined);
  const busy = useRef(false);
  const generation = useRef(0);
  const key = JSON.stringify(filter);

  const countsQuery = query({ directive: filter.directive, since: filter.since });
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
          `/v1/runs${query({ ...filter, limit: PAGE, cursor: first ? undefined : next.current })}`,
        );
        if (gen !== generation.current) return;
        next.current = page.next;
        const loaded = page.runs.map(summaryOf);
        setRuns((had) => {
          const byId = new Map<string, RunSummary>();
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
function merge(had: RunSummary[], changed: RunSummary[], filter: ListFilter): RunSummary[] {
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
