/**
 * A directive's page (`/directives/<item id>`): what it is, why it cannot run (each problem with
 * its place in the file), whether it is paused (and pausing or resuming it), a form to start it
 * generated from its inputs, and its latest runs.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { duration, when } from '../format';
import { InputsForm } from '../parts/inputs-form';
import { DirectivePause } from '../parts/pauses';
import { StatusBadge } from '../parts/status-badge';
import { navigate } from '../router';
import type { DirectiveInfo, RunPage, RunRecord } from '../types';

/** See the module comment. */
export function DirectivePage({ id }: { id: string }) {
  const [info, setInfo] = useState<DirectiveInfo | null | undefined>();
  const [runs, setRuns] = useState<RunRecord[]>([]);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    api<{ directives: DirectiveInfo[] }>('GET', '/v1/directives').then(
      (d) => setInfo(d.directives.find((x) => x.directive === id) ?? null),
      (e: Error) => setError(e.message),
    );
    api<RunPage>('GET', `/v1/runs?directive=${encodeURIComponent(id)}&limit=20`).then(
      (p) => setRuns(p.runs),
      () => undefined,
    );
  }, [id]);
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (info === undefined) return <p class="muted">Loading…</p>;
  if (info === null)
    return (
      <p class="error" role="alert">
        The project has no directive {id}.
      </p>
    );
  const start = async (inputs: Record<string, unknown>) => {
    const run = await api<RunRecord>('POST', '/v1/runs', { directive: id, inputs });
    navigate(`/runs/${run.runId}`);
  };
  return (
    <article aria-labelledby="directive-title">
      <div class="page-head">
        <h1 id="directive-title" class="mono">
          {info.directive}
        </h1>
        {info.valid ? (
          <span class="badge st-completed">valid</span>
        ) : (
          <span class="badge st-failed">invalid</span>
        )}
        <DirectivePause directive={info.directive} />
      </div>
      {info.title && <p>{info.title}</p>}
      {info.description && <p class="muted">{info.description}</p>}
      <p class="muted small">
        {info.space} space{info.version ? `, version ${info.version}` : ''}
        {info.events.length > 0 && `, runs on events ${info.events.join(', ')}`}
        {info.schedules.length > 0 && `, scheduled ${info.schedules.map((s) => s.cron).join(', ')}`}
      </p>
      {[...info.errors, ...info.warnings].length > 0 && (
        <ul class="diagnostics">
          {[...info.errors, ...info.warnings].map((d) => (
            <li class={d.severity}>
              <strong class="mono">{d.code}</strong> {d.message}
              {d.loc && (
                <span class="muted small mono">
                  {' '}
                  ({d.loc.file.split('/').at(-1)}:{d.loc.line}:{d.loc.column})
                </span>
              )}
              {d.hint && <div class="muted small">{d.hint}</div>}
            </li>
          ))}
        </ul>
      )}
      <div class="io-grid">
        <section class="card" aria-labelledby="start-title">
          <h2 id="start-title">Start a run</h2>
          {info.valid ? (
            <InputsForm inputs={info.inputs} submitLabel="Start run" onSubmit={start} />
          ) : (
            <p class="muted">Correct the errors above first.</p>
          )}
        </section>
        <section class="card" aria-labelledby="latest-title">
          <h2 id="latest-title">Latest runs</h2>
          {runs.length === 0 ? (
            <p class="muted">No runs yet.</p>
          ) : (
            <ul class="plain">
              {runs.map((r) => (
                <li>
                  <a href={`/runs/${r.runId}`}>
                    <StatusBadge status={r.status} />{' '}
                    <span class="mono small">{r.runId.slice(0, 8)}</span>{' '}
                    <span class="muted small">
                      {when(r.startedAt)} · {duration((r.endedAt ?? Date.now()) - r.startedAt)}
                    </span>
                  </a>
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>
    </article>
  );
}
