/**
 * A run's page (`/runs/<runId>`): its status and facts, what it waits for and how to steer it,
 * its directive drawn as a graph coloured by each step's state, the waterfall of its steps, the
 * chosen step's result and error beside the directive's text, its inputs and outputs, and the
 * runs it started, the runs it is linked to by reruns, and its redrives. It follows the run live:
 * each event of `GET /v1/runs/<id>/events` reads the run's view again (at most every 300 ms) until
 * the run ends; once it is redriven, the feed is followed again from the last event read, so that
 * `run.redriven` and what the run does next are seen.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { duration, when } from '../format';
import { GraphView } from '../parts/graph-view';
import { JsonBlock } from '../parts/json-block';
import { RedriveHistory, RerunFacts, useReruns } from '../parts/run-operations';
import { StatusBadge } from '../parts/status-badge';
import { SteerPanel } from '../parts/steer-panel';
import { StepDetail } from '../parts/step-detail';
import { TimelineView } from '../parts/timeline-view';
import { openStream } from '../sse';
import type { RunView, ServerInfo } from '../types';

/**
 * Reads the run's view now and whenever its events say it moved; `follow` opens its feed again
 * after the last event read (a redriven run goes on after its `run.ended`).
 */
function useRunView(runId: string) {
  const [view, setView] = useState<RunView | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [follows, setFollows] = useState(0);
  const pending = useRef<number | undefined>(undefined);
  const ended = useRef(false);
  const lastId = useRef<string | undefined>(undefined);
  const shownRun = useRef<string | undefined>(undefined);
  const load = () =>
    api<RunView>('GET', `/v1/runs/${runId}/view`).then(
      (v) => {
        setView(v);
        setError(undefined);
        performance.mark('dirigent:run-view');
      },
      (e: Error) => setError(e.message),
    );
  const soon = () => {
    pending.current ??= window.setTimeout(() => {
      pending.current = undefined;
      void load();
    }, 300);
  };
  useEffect(() => {
    const again = shownRun.current === runId;
    if (!again) {
      shownRun.current = runId;
      lastId.current = undefined;
      setView(undefined);
    }
    ended.current = false;
    void load();
    const stop = openStream(`/v1/runs/${runId}/events`, {
      ...(again && lastId.current !== undefined && { after: lastId.current }),
      onEvent: ({ event, id }) => {
        if (id !== undefined) lastId.current = id;
        if (event === 'run.state' && !again) return;
        if (event === 'run.ended') ended.current = true;
        if (event === 'run.redriven') ended.current = false;
        soon();
      },
      reconnect: () => !ended.current,
    });
    return () => {
      stop();
      clearTimeout(pending.current);
      pending.current = undefined;
    };
  }, [runId, follows]);
  return { view, error, reload: soon, follow: () => setFollows((n) => n + 1) };
}

/** See the module comment. */
export function RunPage({ runId, info }: { runId: string; info: ServerInfo | undefined }) {
  const { view, error, reload, follow } = useRunView(runId);
  const [chosen, setChosen] = useState<string | undefined>();
  const reruns = useReruns(runId, view?.record.status ?? '');
  if (view === undefined)
    return error ? (
      <p class="error" role="alert">
        {error}
      </p>
    ) : (
      <p class="muted">Loading run {runId}…</p>
    );
  const r = view.record;
  const failedStep = r.error?.step ?? r.steps.find((s) => s.status === 'failed')?.name;
  const step = chosen ?? failedStep ?? r.waiting?.[0]?.step;
  const traceLink =
    view.traceId && /^[0-9a-f]{32}$/.test(view.traceId) && info?.traceUrl
      ? info.traceUrl.replace('{traceId}', view.traceId)
      : undefined;

  return (
    <article class="run" aria-labelledby="run-title" data-status={r.status}>
      <div class="page-head">
        <h1 id="run-title">
          <a href={`/directives/${r.directive}`}>{r.directive}</a>
        </h1>
        <StatusBadge status={r.status} />
      </div>
      <dl class="facts run-facts">
        <dt>run</dt>
        <dd class="mono">{r.runId}</dd>
        <dt>started</dt>
        <dd>{when(r.startedAt)}</dd>
        <dt>{r.endedAt === null ? 'running for' : 'took'}</dt>
        <dd>{duration((r.endedAt ?? Date.now()) - r.startedAt)}</dd>
        {r.tags && (
          <>
            <dt>tags</dt>
            <dd class="tags">
              {Object.entries(r.tags).map(([name, value]) => (
                <span class="tag mono" key={name}>
                  {name}={value}
                </span>
              ))}
            </dd>
          </>
        )}
        {view.parentRunId && (
          <>
            <dt>started by</dt>
            <dd>
              <a class="mono" href={`/runs/${view.parentRunId}`}>
                {view.parentRunId}
              </a>
            </dd>
          </>
        )}
        <RerunFacts record={r} reruns={reruns} />
        {view.traceId && (
          <>
            <dt>trace</dt>
            <dd class="mono">
              {traceLink ? (
                <a href={traceLink} target="_blank" rel="noopener noreferrer">
                  {view.traceId}
                </a>
              ) : (
                view.traceId
              )}
            </dd>
          </>
        )}
      </dl>
      {r.error && (
        <div class="error run-error" role="alert" data-testid="run-error">
          <strong class="mono">{r.error.code}</strong> {r.error.message}
          {r.error.step && (
            <button type="button" class="link" onClick={() => setChosen(r.error!.step!)}>
              step {r.error.step}
            </button>
          )}
        </div>
      )}
      <SteerPanel view={view} onChanged={reload} onRedriven={follow} />
      <RedriveHistory record={r} />
      <div class="run-grid">
        <section class="card" aria-labelledby="graph-title">
          <h2 id="graph-title">Graph</h2>
          {view.graph ? (
            <GraphView
              graph={view.graph}
              steps={view.steps}
              runStatus={r.status}
              selected={step}
              onSelect={setChosen}
            />
          ) : (
            <p class="muted">{view.graphError ?? 'No graph.'}</p>
          )}
        </section>
        <section class="card" aria-labelledby="step-title">
          <h2 id="step-title">Step</h2>
          <StepDetail view={view} step={step} />
        </section>
      </div>
      <section class="card" aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline</h2>
        <TimelineView
          rows={view.timeline}
          startedAt={r.startedAt}
          endedAt={r.endedAt}
          selected={step}
          onSelect={setChosen}
        />
      </section>
      <div class="io-grid">
        <section class="card" aria-labelledby="inputs-title">
          <h2 id="inputs-title">Inputs</h2>
          <JsonBlock value={view.inputs ?? {}} label="Inputs" />
        </section>
        <section class="card" aria-labelledby="outputs-title">
          <h2 id="outputs-title">Outputs</h2>
          <JsonBlock value={r.outputs} label="Outputs" />
        </section>
      </div>
      {view.children.length > 0 && (
        <section class="card" aria-labelledby="children-title">
          <h2 id="children-title">Child runs</h2>
          <ul>
            {view.children.map((c) => (
              <li>
                <span class="mono">{c.step}</span> →{' '}
                <a class="mono" href={`/runs/${c.runId}`}>
                  {c.runId}
                </a>
              </li>
            ))}
          </ul>
        </section>
      )}
    </article>
  );
}
