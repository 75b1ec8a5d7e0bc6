/**
 * The run list: counts by status, filters (status, directive, time, tags) kept in the address,
 * search by run id, and the runs, newest first, updated live and loaded page by page as the list
 * scrolls (only the rows in view are drawn). Runs can be selected, to cancel or redrive them one
 * by one (run-selection.tsx), and every run the filter matches acted on at once (bulk-panel.tsx).
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { duration, shortId, when } from '../format';
import { BulkPanel } from '../parts/bulk-panel';
import { DeploymentPause } from '../parts/pauses';
import { SelectionBar } from '../parts/run-selection';
import { StatusBadge } from '../parts/status-badge';
import { useVirtual } from '../parts/use-virtual';
import { navigate, params } from '../router';
import type { RunCounts, RunRecord, RunStatus } from '../types';
import { RUN_STATUSES } from '../../../src/engine/run-record.js';
import { listRunOf, useRunList, type ListFilter, type ListRun } from './use-run-list';

const PERIODS: Record<string, number> = { '1h': 3_600_000, '24h': 86_400_000, '7d': 604_800_000 };

/** Statuses a count is shown for only while some run has it. */
const RARE = new Set(['queued', 'paused']);

/** A tag as the list filters by it: `name:value`, both non-empty. */
const TAG = /^[^:\s][^:]*:.+$/;

/** The statuses the server counts (in its order), or the ones this console knows until it says. */
function statusesOf(counts: RunCounts | undefined): string[] {
  return counts ? Object.keys(counts.byStatus) : [...RUN_STATUSES];
}

/** See the module comment. */
export function RunsPage() {
  const p = params();
  const status = (p.get('status') ?? undefined) as RunStatus | undefined;
  const directive = p.get('directive') ?? undefined;
  const period = p.get('period') ?? '';
  const tags = p.getAll('tag').filter((t) => TAG.test(t));
  // The window's start is taken when the period is chosen, so the filter stays the same meanwhile.
  const since = useMemo(
    () => (PERIODS[period] ? Date.now() - PERIODS[period] : undefined),
    [period],
  );
  const filter: ListFilter = {
    ...(status && { status }),
    ...(directive && { directive }),
    ...(since !== undefined && { since }),
    ...(tags.length > 0 && { tags }),
  };
  const list = useRunList(filter);
  const statuses = statusesOf(list.counts);
  const filterKey = JSON.stringify(filter);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [bulk, setBulk] = useState(false);
  // Another filter, another list: nothing of it is selected.
  useEffect(() => setSelected(new Set()), [filterKey]);
  const toggle = (runId: string) =>
    setSelected((had) => {
      const now = new Set(had);
      if (!now.delete(runId)) now.add(runId);
      return now;
    });
  const setTags = (next: string[]) => {
    const q = params();
    q.delete('tag');
    for (const t of next) q.append('tag', t);
    const s = q.toString();
    navigate(s === '' ? '/' : `/?${s}`, true);
  };
  const set = (key: string, value: string | undefined) => {
    const q = params();
    if (value === undefined || value === '') q.delete(key);
    else q.set(key, value);
    const s = q.toString();
    navigate(s === '' ? '/' : `/?${s}`, true);
  };
  const [found, setFound] = useState<ListRun | null | undefined>();
  const [search, setSearch] = useState('');
  const [searchError, setSearchError] = useState<string | undefined>();
  const term = search.trim();
  const shown = term === '' ? list.runs : list.runs.filter((r) => r.runId.startsWith(term));
  const rows = found ? [found, ...shown.filter((r) => r.runId !== found.runId)] : shown;

  const find = async (e: Event) => {
    e.preventDefault();
    setFound(undefined);
    setSearchError(undefined);
    if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/.test(term)) return;
    try {
      setFound(listRunOf(await api<RunRecord>('GET', `/v1/runs/${term}`)));
    } catch (err) {
      if (err instanceof ApiError && err.code === 'RUN_NOT_FOUND') {
        if (shown.length === 0) setSearchError(`No run with id ${term}.`);
      } else setSearchError((err as Error).message);
    }
  };

  return (
    <section aria-labelledby="runs-title">
      <div class="page-head">
        <h1 id="runs-title">Runs</h1>
        <span class="live" title="The list follows the runs as they change">
          live
        </span>
        <DeploymentPause />
      </div>
      <div class="counts" role="group" aria-label="Runs by status">
        <button
          type="button"
          class="count"
          aria-pressed={status === undefined}
          onClick={() => set('status', undefined)}
        >
          all <strong>{list.counts?.total ?? '…'}</strong>
        </button>
        {statuses
          .filter(
            (s) =>
              !RARE.has(s) ||
              status === s ||
              ((list.counts?.byStatus as Record<string, number> | undefined)?.[s] ?? 0) > 0,
          )
          .map((s) => (
            <button
              type="button"
              class={`count st-${s}`}
              aria-pressed={status === s}
              onClick={() => set('status', status === s ? undefined : s)}
            >
              {s}{' '}
              <strong>
                {(list.counts?.byStatus as Record<string, number> | undefined)?.[s] ?? '…'}
              </strong>
            </button>
          ))}
      </div>
      <div class="filters">
        <label>
          Status
          <select
            value={status ?? ''}
            onChange={(e) => set('status', (e.target as HTMLSelectElement).value)}
          >
            <option value="">any</option>
            {statuses.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <DirectiveFilter value={directive} onChange={(v) => set('directive', v)} />
        <label>
          Started
          <select
            value={period}
            onChange={(e) => set('period', (e.target as HTMLSelectElement).value)}
          >
            <option value="">any time</option>
            <option value="1h">last hour</option>
            <option value="24h">last 24 hours</option>
            <option value="7d">last 7 days</option>
          </select>
        </label>
        <form class="search" role="search" onSubmit={(e) => void find(e)}>
          <label>
            Run id
            <input
              type="search"
              name="run"
              placeholder="id or its beginning"
              value={search}
              onInput={(e) => {
                setSearch((e.target as HTMLInputElement).value);
                setFound(undefined);
                setSearchError(undefined);
              }}
            />
          </label>
          <button type="submit">Find</button>
        </form>
        <TagFilter tags={tags} onChange={setTags} />
        <button
          type="button"
          class="bulk-open"
          aria-expanded={bulk}
          onClick={() => setBulk(!bulk)}
          title="Cancel, redrive or rerun every run the filter matches, after a dry run"
        >
          Bulk…
        </button>
      </div>
      {tags.length > 0 && (
        <div class="tags active-tags" role="group" aria-label="Tags filtered by">
          {tags.map((t) => (
            <span class="tag mono" key={t}>
              {t}
              <button
                type="button"
                class="link"
                aria-label={`Remove tag ${t}`}
                onClick={() => setTags(tags.filter((x) => x !== t))}
              >
                ×
              </button>
            </span>
          ))}
        </div>
      )}
      {bulk && <BulkPanel filter={filter} onClose={() => setBulk(false)} />}
      <SelectionBar selected={[...selected]} onClear={() => setSelected(new Set())} />
      {searchError && (
        <p class="error" role="alert">
          {searchError}
        </p>
      )}
      {list.error && (
        <p class="error" role="alert">
          {list.error}
        </p>
      )}
      <RunRows
        rows={rows}
        loading={list.loading}
        onEnd={() => list.hasMore() && list.loadMore()}
        selected={selected}
        onToggle={toggle}
        onToggleAll={(on) => setSelected(on ? new Set(rows.map((r) => r.runId)) : new Set())}
      />
    </section>
  );
}

/** A tag to filter by, written `name:value`, added to those in the address. */
function TagFilter({ tags, onChange }: { tags: string[]; onChange: (tags: string[]) => void }) {
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const add = (e: Event) => {
    e.preventDefault();
    const t = text.trim();
    if (!TAG.test(t)) return setProblem('Write a tag as name:value.');
    setProblem(undefined);
    setText('');
    if (!tags.includes(t)) onChange([...tags, t]);
  };
  return (
    <form class="search" onSubmit={add} aria-label="Filter by tag">
      <label>
        Tag
        <input
          type="text"
          name="tag"
          placeholder="name:value"
          spellcheck={false}
          value={text}
          aria-invalid={problem !== undefined}
          title={problem}
          onInput={(e) => {
            setText((e.target as HTMLInputElement).value);
            setProblem(undefined);
          }}
        />
      </label>
      <button type="submit">Add</button>
      {problem && (
        <span class="error-text small" role="alert">
          {problem}
        </span>
      )}
    </form>
  );
}

function DirectiveFilter({
  value,
  onChange,
}: {
  value: string | undefined;
  onChange: (v: string) => void;
}) {
  const [ids, setIds] = useState<string[]>([]);
  useEffect(() => {
    api<{ directives: { directive: string }[] }>('GET', '/v1/directives').then(
      (d) => setIds(d.directives.map((x) => x.directive)),
      () => undefined,
    );
  }, []);
  return (
    <label>
      Directive
      <select value={value ?? ''} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        <option value="">any</option>
        {value !== undefined && !ids.includes(value) && <option value={value}>{value}</option>}
        {ids.map((id) => (
          <option value={id}>{id}</option>
        ))}
      </select>
    </label>
  );
}

const narrow = () => window.matchMedia('(max-width: 640px)').matches;

/** The rows, virtualised, each with its box to select it; `onEnd` when the last rows come into view. */
function RunRows({
  rows,
  loading,
  onEnd,
  selected,
  onToggle,
  onToggleAll,
}: {
  rows: ListRun[];
  loading: boolean;
  onEnd: () => void;
  selected: ReadonlySet<string>;
  onToggle: (runId: string) => void;
  onToggleAll: (on: boolean) => void;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const rowHeight = narrow() ? 64 : 40;
  const v = useVirtual(rows.length, rowHeight, scroller);
  const items = v.getVirtualItems();
  const last = items.at(-1)?.index ?? -1;
  useEffect(() => {
    if (rows.length > 0 && last >= rows.length - 20) onEnd();
  }, [last, rows.length]);
  const all = rows.length > 0 && rows.every((r) => selected.has(r.runId));
  const some = !all && rows.some((r) => selected.has(r.runId));
  const now = Date.now();
  return (
    <div class="run-table">
      <div class="run-row head">
        <span class="pick">
          <input
            type="checkbox"
            aria-label={`Select the ${rows.length} runs listed`}
            checked={all}
            indeterminate={some}
            disabled={rows.length === 0}
            onChange={() => onToggleAll(!all)}
          />
        </span>
        <div class="run-cols" aria-hidden="true">
          <span>status</span>
          <span>run</span>
          <span>directive</span>
          <span>started</span>
          <span>took</span>
          <span>error</span>
        </div>
      </div>
      <div class="run-scroll" ref={scroller} data-testid="run-list" aria-label="Runs">
        {rows.length === 0 && <p class="muted empty">{loading ? 'Loading…' : 'No runs match.'}</p>}
        <div style={{ height: `${v.getTotalSize()}px`, position: 'relative' }}>
          {items.map((item) => {
            const r = rows[item.index]!;
            const on = selected.has(r.runId);
            return (
              <div
                key={r.runId}
                class={`run-row${on ? ' selected' : ''}`}
                data-run={r.runId}
                style={{ transform: `translateY(${item.start}px)`, height: `${rowHeight}px` }}
              >
                <span class="pick">
                  <input
                    type="checkbox"
                    aria-label={`Select run ${r.runId}`}
                    checked={on}
                    onChange={() => onToggle(r.runId)}
                  />
                </span>
                <a class="run-cols" href={`/runs/${r.runId}`}>
                  <span>
                    <StatusBadge status={r.status} />
                  </span>
                  <span class="mono" title={r.runId}>
                    {shortId(r.runId)}
                  </span>
                  <span class="ellipsis" title={r.summary}>
                    {r.directive}
                    {r.summary && <span class="muted"> {r.summary}</span>}
                  </span>
                  <span class="muted">{when(r.startedAt)}</span>
                  <span class="muted">{duration((r.endedAt ?? now) - r.startedAt)}</span>
                  <span class="ellipsis err-text">
                    {r.error ? `${r.error.code}: ${r.error.message}` : ''}
                  </span>
                </a>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
