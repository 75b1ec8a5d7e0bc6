/**
 * Operating an ended run from its page: redrive it (a failed or cancelled run goes on under its
 * id from where it stopped: `POST /v1/runs/<id>/redrive`), rerun it from one of its steps (a new
 * run with the state the old one had before that step, its inputs edited as JSON if need be:
 * `POST /v1/runs/<id>/rerun`), the history of its redrives, and the runs it is linked to by
 * reruns: the one it reruns (`rerunOf`) and those that rerun it (`GET /v1/runs?tag=
 * dirigent.rerun-of:<id>`). What the API refuses is shown as it says it: code, message and hint.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { json, shortId, when } from '../format';
import { navigate } from '../router';
import type { RunPage, RunRecord, RunView } from '../types';
import { ApiProblem } from './api-problem';
import { StatusBadge } from './status-badge';

/** The tag a rerun carries: the id of the run it reruns. */
export const RERUN_OF_TAG = 'dirigent.rerun-of';

/** Whether a run in `status` can be redriven (the server has the last word). */
export const redrivable = (status: string) => status === 'failed' || status === 'cancelled';

/** The step a run stopped at: its error's, else the last that failed or was cancelled. */
export function stoppedAt(record: RunRecord): string | undefined {
  return (
    record.error?.step ??
    record.steps.findLast((s) => s.status === 'failed' || s.status === 'cancelled')?.name ??
    undefined
  );
}

/**
 * "Redrive…", then a confirmation; once the server took the redrive, `onRedriven` (the page
 * follows the run's feed again).
 */
export function RedriveButton({
  record,
  onRedriven,
}: {
  record: RunRecord;
  onRedriven: () => void;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const step = stoppedAt(record);
  const redrive = async () => {
    setBusy(true);
    setError(undefined);
    try {
      // A second is enough for a refusal to come back; a redrive that goes on longer answers 202.
      await api('POST', `/v1/runs/${record.runId}/redrive?wait=1`, { by: 'console' });
      setAsking(false);
      onRedriven();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      {asking ? (
        <span class="confirm" role="group" aria-label="Redrive the run?">
          <span>
            Go on from {step ? <span class="mono">{step}</span> : 'where it stopped'}, under the
            same id? The steps that completed keep their results.
          </span>
          <button type="button" class="primary" disabled={busy} onClick={() => void redrive()}>
            Redrive
          </button>
          <button type="button" onClick={() => setAsking(false)}>
            Leave it
          </button>
        </span>
      ) : (
        <button type="button" class="primary" onClick={() => setAsking(true)}>
          Redrive…
        </button>
      )}
      {error !== undefined && (
        <div class="action-problem">
          <ApiProblem error={error} />
        </div>
      )}
    </>
  );
}

/** The steps a rerun can start at: top-level steps that ran, in the directive's order. */
export function rerunSteps(view: RunView): string[] {
  const ran = (name: string) => view.steps[name]?.seq !== undefined;
  if (view.graph)
    return view.graph.nodes
      .filter((n) => n.kind === 'step' && n.cluster === undefined && n.step !== undefined)
      .map((n) => n.step!)
      .filter(ran);
  return [...new Set(view.record.steps.map((s) => s.name))].filter(ran);
}

/** "Rerun from step…": a step, the inputs as JSON, and the new run's page once it started. */
export function RerunFromStep({ view }: { view: RunView }) {
  const r = view.record;
  const steps = rerunSteps(view);
  const original = json(view.inputs ?? {});
  const [open, setOpen] = useState(false);
  const [step, setStep] = useState<string>('');
  const [inputs, setInputs] = useState(original);
  const [problem, setProblem] = useState<string | undefined>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const chosen = step !== '' && steps.includes(step) ? step : (stoppedAt(r) ?? steps[0] ?? '');
  const submit = async (e: Event) => {
    e.preventDefault();
    setProblem(undefined);
    setError(undefined);
    let edited: unknown;
    try {
      edited = JSON.parse(inputs.trim() === '' ? '{}' : inputs);
    } catch (err) {
      return setProblem(`The inputs are not JSON: ${(err as Error).message}`);
    }
    if (typeof edited !== 'object' || edited === null || Array.isArray(edited))
      return setProblem('The inputs must be a JSON object: {"name": value, …}.');
    const changed = JSON.stringify(edited) !== JSON.stringify(view.inputs ?? {});
    setBusy(true);
    try {
      const run = await api<RunRecord>('POST', `/v1/runs/${r.runId}/rerun`, {
        from: chosen,
        ...(changed && { inputs: edited }),
      });
      navigate(`/runs/${run.runId}`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
        Rerun from step…
      </button>
      {open && (
        <form
          class="card rerun rerun-from"
          aria-label="Rerun from a step"
          onSubmit={(e) => void submit(e)}
        >
          <p class="muted small">
            A new run of {r.directive} that starts at the step chosen, with the state and step
            results this run had before it; the steps before it do not run again.
          </p>
          {steps.length === 0 ? (
            <p class="muted">No step of the process ran: there is nothing to start from.</p>
          ) : (
            <>
              <label for="rerun-step">Step to start at</label>
              <select
                id="rerun-step"
                value={chosen}
                onChange={(e) => setStep((e.target as HTMLSelectElement).value)}
              >
                {steps.map((s) => (
                  <option value={s}>{s}</option>
                ))}
              </select>
              <label for="rerun-inputs">Inputs (JSON, laid over the run&apos;s)</label>
              <textarea
                id="rerun-inputs"
                rows={Math.min(12, Math.max(3, inputs.split('\n').length))}
                spellcheck={false}
                value={inputs}
                aria-invalid={problem !== undefined}
                onInput={(e) => setInputs((e.target as HTMLTextAreaElement).value)}
              />
              {problem && (
                <p class="error" role="alert">
                  {problem}
                </p>
              )}
              <ApiProblem error={error} />
              <div class="row">
                <button type="submit" disabled={busy || chosen === ''}>
                  Start rerun
                </button>
                {inputs !== original && (
                  <button type="button" class="link" onClick={() => setInputs(original)}>
                    undo edits
                  </button>
                )}
              </div>
            </>
          )}
        </form>
      )}
    </>
  );
}

/** The runs that rerun `runId`, newest first (none while they load, or when the list fails). */
export function useReruns(runId: string, status: string): RunRecord[] {
  const [reruns, setReruns] = useState<RunRecord[]>([]);
  useEffect(() => {
    setReruns([]);
    const q = new URLSearchParams({ tag: `${RERUN_OF_TAG}:${runId}`, limit: '100' });
    api<RunPage>('GET', `/v1/runs?${q.toString()}`).then(
      (page) => setReruns(page.runs),
      () => undefined,
    );
  }, [runId, status]);
  return reruns;
}

/** The facts of a run's lineage by reruns: what it reruns, and what reruns it. */
export function RerunFacts({ record, reruns }: { record: RunRecord; reruns: RunRecord[] }) {
  return (
    <>
      {record.rerunOf && (
        <>
          <dt>rerun of</dt>
          <dd data-testid="rerun-of">
            <a class="mono" href={`/runs/${record.rerunOf.runId}`}>
              {shortId(record.rerunOf.runId)}
            </a>{' '}
            from <span class="mono">{record.rerunOf.step}</span>
          </dd>
        </>
      )}
      {reruns.length > 0 && (
        <>
          <dt>reruns</dt>
          <dd class="tags" data-testid="reruns">
            {reruns.map((run) => (
              <span key={run.runId}>
                <a class="mono" href={`/runs/${run.runId}`} title={run.runId}>
                  {shortId(run.runId)}
                </a>{' '}
                <StatusBadge status={run.status} />
              </span>
            ))}
          </dd>
        </>
      )}
    </>
  );
}

/** Each redrive of the run: when, by whom, from which steps, and how it had ended before. */
export function RedriveHistory({ record }: { record: RunRecord }) {
  const redrives = record.redrives ?? [];
  if (redrives.length === 0) return null;
  return (
    <section class="card" aria-labelledby="redrives-title">
      <h2 id="redrives-title">Redrives</h2>
      <table class="history" data-testid="redrives">
        <thead>
          <tr>
            <th scope="col">when</th>
            <th scope="col">by</th>
            <th scope="col">from</th>
            <th scope="col">it had</th>
          </tr>
        </thead>
        <tbody>
          {redrives.map((d, i) => (
            <tr key={i}>
              <td>{when(d.at)}</td>
              <td class="mono">{d.by}</td>
              <td class="mono">{d.steps.join(', ') || '—'}</td>
              <td>
                <StatusBadge status={d.status} />
                {d.error && (
                  <span class="err-text">
                    {' '}
                    <span class="mono">{d.error.code}</span> {d.error.message}
                  </span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
