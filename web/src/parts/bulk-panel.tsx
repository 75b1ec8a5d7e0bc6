/**
 * "Bulk…": cancel, redrive or rerun every run the list's filter matches, through
 * `POST /v1/runs/bulk`. A dry run comes first (how many runs match, and a sample of them); the
 * action is confirmed after it, and its report says how many runs were acted on, skipped and
 * failed. Each confirmed action has an id of its own, kept while the panel is open, so that
 * sending it again after a lost answer goes on with the same action instead of starting another.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { shortId, when } from '../format';
import type { BulkActionName, BulkReport, RunStatus } from '../types';
import { ApiProblem } from './api-problem';
import { StatusBadge } from './status-badge';

/** The filter a bulk action is on, as the list holds it. */
export interface BulkFilter {
  status?: RunStatus;
  directive?: string;
  /** Epoch ms. */
  since?: number;
  /** `name:value` each. */
  tags?: string[];
}

const ACTIONS: { action: BulkActionName; label: string; done: string }[] = [
  { action: 'cancel', label: 'Cancel', done: 'cancelled' },
  { action: 'redrive', label: 'Redrive', done: 'redriven' },
  { action: 'rerun', label: 'Rerun from the failed step', done: 'rerun' },
];

/** The filter as the bulk route takes it. */
function bodyFilter(f: BulkFilter): Record<string, unknown> {
  const tags = Object.fromEntries(
    (f.tags ?? []).map((t) => [t.slice(0, t.indexOf(':')), t.slice(t.indexOf(':') + 1)]),
  );
  return {
    ...(f.status && { status: f.status }),
    ...(f.directive && { directive: f.directive }),
    ...(f.since !== undefined && { since: String(f.since) }),
    ...(Object.keys(tags).length > 0 && { tags }),
  };
}

/** The filter in words. */
function describe(f: BulkFilter): string {
  const parts = [
    f.status && `status ${f.status}`,
    f.directive && `directive ${f.directive}`,
    ...(f.tags ?? []).map((t) => `tag ${t}`),
    f.since !== undefined && `started since ${when(f.since)}`,
  ].filter(Boolean);
  return parts.length === 0 ? 'every run (no filter is set)' : parts.join(' · ');
}

const newActionId = () =>
  `console-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

/** See the module comment. */
export function BulkPanel({ filter, onClose }: { filter: BulkFilter; onClose: () => void }) {
  const [action, setAction] = useState<BulkActionName>(
    filter.status === 'failed' ? 'redrive' : 'cancel',
  );
  const [dry, setDry] = useState<BulkReport | undefined>();
  const [report, setReport] = useState<BulkReport | undefined>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [actionId, setActionId] = useState(newActionId);
  const key = JSON.stringify([filter, action]);
  // Another filter or action: what was counted no longer holds.
  useEffect(() => {
    setDry(undefined);
    setReport(undefined);
    setError(undefined);
    setActionId(newActionId());
  }, [key]);
  const chosen = ACTIONS.find((a) => a.action === action)!;
  const send = async (dryRun: boolean) => {
    setBusy(true);
    setError(undefined);
    try {
      const answer = await api<BulkReport>('POST', '/v1/runs/bulk', {
        action,
        filter: bodyFilter(filter),
        dryRun,
        by: 'console',
        ...(!dryRun && { actionId }),
      });
      if (dryRun) {
        setDry(answer);
        setReport(undefined);
      } else {
        setReport(answer);
        setDry(undefined);
        setActionId(newActionId());
      }
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const runs = (k: number) => `${k} run${k === 1 ? '' : 's'}`;
  return (
    <section class="card bulk" aria-labelledby="bulk-title">
      <div class="bulk-head">
        <h2 id="bulk-title">Act on every run the filter matches</h2>
        <button type="button" class="link" onClick={onClose}>
          close
        </button>
      </div>
      <p class="muted" data-testid="bulk-filter">
        Filter: {describe(filter)}
      </p>
      <div class="row">
        <label class="inline">
          Action
          <select
            value={action}
            onChange={(e) => setAction((e.target as HTMLSelectElement).value as BulkActionName)}
          >
            {ACTIONS.map((a) => (
              <option value={a.action}>{a.label}</option>
            ))}
          </select>
        </label>
        <button type="button" disabled={busy} onClick={() => void send(true)}>
          Dry run
        </button>
      </div>
      <ApiProblem error={error} />
      {dry && (
        <div class="bulk-dry" data-testid="bulk-dry-run">
          <p>
            <strong data-testid="bulk-matched">{runs(dry.matched)}</strong> match; nothing was
            changed.
            {dry.matched > (dry.sample?.length ?? 0) &&
              ` The first ${dry.sample?.length ?? 0} are shown.`}
          </p>
          {(dry.sample?.length ?? 0) > 0 && (
            <table class="history" aria-label="Runs that match">
              <thead>
                <tr>
                  <th scope="col">status</th>
                  <th scope="col">run</th>
                  <th scope="col">directive</th>
                  <th scope="col">started</th>
                </tr>
              </thead>
              <tbody>
                {dry.sample!.map((s) => (
                  <tr key={s.runId} data-sample={s.runId}>
                    <td>
                      <StatusBadge status={s.status} />
                    </td>
                    <td>
                      <a class="mono" href={`/runs/${s.runId}`} title={s.runId}>
                        {shortId(s.runId)}
                      </a>
                    </td>
                    <td>
                      {s.directive}
                      {s.summary && <span class="muted"> {s.summary}</span>}
                    </td>
                    <td class="muted">{when(s.startedAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {dry.matched > 0 && (
            <div class="confirm" role="group" aria-label={`${chosen.label}: confirm`}>
              <span class="muted small">
                The action acts on the runs that match when it runs, the action applying to each or
                not (those it does not apply to are skipped).
              </span>
              <button
                type="button"
                class={action === 'cancel' ? 'danger' : 'primary'}
                disabled={busy}
                onClick={() => void send(false)}
              >
                {chosen.label}: {runs(dry.matched)}
              </button>
            </div>
          )}
        </div>
      )}
      {report && (
        <p class="outcome" role="status" data-testid="bulk-report">
          <strong data-testid="bulk-acted">{report.acted}</strong> {chosen.done},{' '}
          <strong data-testid="bulk-skipped">{report.skipped}</strong> skipped,{' '}
          <strong data-testid="bulk-failed">{report.failed}</strong> failed, of{' '}
          {runs(report.matched)} matched <span class="muted small mono">({report.actionId})</span>
        </p>
      )}
      {report && report.failures.length > 0 && (
        <ul class="failures">
          {report.failures.map((f) => (
            <li key={f.runId}>
              <a class="mono" href={`/runs/${f.runId}`}>
                {f.runId}
              </a>
              :{' '}
              <span class="err-text">
                <span class="mono">{f.code}</span> {f.message}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
