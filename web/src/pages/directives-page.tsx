/** The project's directives: inputs, whether each is valid or paused, and its latest run. */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { when } from '../format';
import { usePauses } from '../parts/pauses';
import { StatusBadge } from '../parts/status-badge';
import type { DirectiveInfo, RunPage, RunRecord } from '../types';

/** See the module comment. */
export function DirectivesPage() {
  const [list, setList] = useState<DirectiveInfo[] | undefined>();
  const [latest, setLatest] = useState<Map<string, RunRecord>>(new Map());
  const [error, setError] = useState<string | undefined>();
  const pauses = usePauses().state;
  useEffect(() => {
    api<{ directives: DirectiveInfo[] }>('GET', '/v1/directives').then(
      (d) => setList(d.directives),
      (e: Error) => setError(e.message),
    );
    api<RunPage>('GET', '/v1/runs?limit=500').then(
      (p) => {
        const m = new Map<string, RunRecord>();
        for (const r of p.runs) if (!m.has(r.directive)) m.set(r.directive, r);
        setLatest(m);
      },
      () => undefined,
    );
  }, []);
  return (
    <section aria-labelledby="directives-title">
      <div class="page-head">
        <h1 id="directives-title">Directives</h1>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {list === undefined && !error && <p class="muted">Loading…</p>}
      {list && list.length === 0 && (
        <p class="muted">The project has no directives under .ai/directives/.</p>
      )}
      {list && list.length > 0 && (
        <div class="table-wrap">
          <table class="directives">
            <thead>
              <tr>
                <th scope="col">directive</th>
                <th scope="col">inputs</th>
                <th scope="col">state</th>
                <th scope="col">latest run</th>
              </tr>
            </thead>
            <tbody>
              {list.map((d) => {
                const run = latest.get(d.directive);
                return (
                  <tr>
                    <td>
                      <a href={`/directives/${d.directive}`} class="mono">
                        {d.directive}
                      </a>
                      {(d.title ?? d.description) && (
                        <div class="muted small">{d.title ?? d.description}</div>
                      )}
                    </td>
                    <td class="small">
                      {d.inputs.length === 0 ? (
                        <span class="muted">none</span>
                      ) : (
                        d.inputs
                          .map((i) => `${i.name}${i.required ? '' : '?'}: ${i.type}`)
                          .join(', ')
                      )}
                    </td>
                    <td>
                      {d.valid ? (
                        <span class="badge st-completed">valid</span>
                      ) : (
                        <span class="badge st-failed" title={d.errors[0]?.message}>
                          {d.errors.length} error{d.errors.length === 1 ? '' : 's'}
                        </span>
                      )}
                      {(pauses?.all || pauses?.directives.includes(d.directive)) && (
                        <>
                          {' '}
                          <span class="badge st-paused">paused</span>
                        </>
                      )}
                      {d.warnings.length > 0 && (
                        <span class="muted small">
                          {' '}
                          {d.warnings.length} warning{d.warnings.length === 1 ? '' : 's'}
                        </span>
                      )}
                    </td>
                    <td>
                      {run ? (
                        <a href={`/runs/${run.runId}`}>
                          <StatusBadge status={run.status} />{' '}
                          <span class="muted small">{when(run.startedAt)}</span>
                        </a>
                      ) : (
                        <span class="muted">never</span>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
