/**
 * The runs chosen in the run list, and what can be done to them one by one through the per-run
 * routes: cancel (`POST /v1/runs/<id>/cancel`) or redrive (`POST /v1/runs/<id>/redrive`), a few at
 * once, after a confirmation. The outcome counts the runs acted on, those skipped (the server
 * answered 409: the action did not apply, an ended run to cancel, say) and those it failed on,
 * with the first failures said as the API said them.
 */
import { useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { problemText } from './api-problem';

/** What can be done to the runs selected. */
export type SelectionAction = 'cancel' | 'redrive';

const VERB: Record<SelectionAction, { ask: string; done: string; button: string }> = {
  cancel: { ask: 'Cancel', done: 'cancelled', button: 'Cancel selected' },
  redrive: { ask: 'Redrive', done: 'redriven', button: 'Redrive selected' },
};

/** What an action did to the runs selected. */
export interface SelectionOutcome {
  action: SelectionAction;
  acted: number;
  /** Runs the action did not apply to (409), by the code the server gave. */
  skipped: { runId: string; code: string }[];
  failed: { runId: string; problem: string }[];
}

/** Runs acted on at once. */
const AT_ONCE = 4;

/** Does `action` to each run of `runIds`, {@link AT_ONCE} at a time; `onDone` after each. */
export async function actOnRuns(
  action: SelectionAction,
  runIds: readonly string[],
  onDone: (done: number) => void = () => undefined,
): Promise<SelectionOutcome> {
  const outcome: SelectionOutcome = { action, acted: 0, skipped: [], failed: [] };
  const call = (runId: string) =>
    action === 'cancel'
      ? api('POST', `/v1/runs/${runId}/cancel`, { reason: 'Cancelled in the console.' })
      : // Within a second a refusal comes back; a redrive that goes on answers 202 then.
        api('POST', `/v1/runs/${runId}/redrive?wait=1`, { by: 'console' });
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < runIds.length) {
      const runId = runIds[next++]!;
      try {
        await call(runId);
        outcome.acted++;
      } catch (e) {
        if (e instanceof ApiError && e.status === 409)
          outcome.skipped.push({ runId, code: e.code });
        else outcome.failed.push({ runId, problem: problemText(e) });
      }
      onDone(++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, runIds.length) }, worker));
  return outcome;
}

/** The selection's bar: how many runs, the actions, and the outcome of the last one. */
export function SelectionBar({
  selected,
  onClear,
}: {
  selected: readonly string[];
  onClear: () => void;
}) {
  const [asking, setAsking] = useState<SelectionAction | undefined>();
  const [progress, setProgress] = useState<{ done: number; of: number } | undefined>();
  const [outcome, setOutcome] = useState<SelectionOutcome | undefined>();
  const n = selected.length;
  const act = async (action: SelectionAction) => {
    setAsking(undefined);
    setOutcome(undefined);
    const ids = [...selected];
    setProgress({ done: 0, of: ids.length });
    const result = await actOnRuns(action, ids, (done) => setProgress({ done, of: ids.length }));
    setProgress(undefined);
    setOutcome(result);
    onClear();
  };
  if (n === 0 && outcome === undefined && progress === undefined) return null;
  const runs = (k: number) => `${k} run${k === 1 ? '' : 's'}`;
  return (
    <section class="selection" aria-label="Selected runs">
      <div class="selection-row">
        {n > 0 && <strong data-testid="selected-count">{runs(n)} selected</strong>}
        {n > 0 && progress === undefined && (
          <>
            <button type="button" class="danger" onClick={() => setAsking('cancel')}>
              {VERB.cancel.button}
            </button>
            <button type="button" onClick={() => setAsking('redrive')}>
              {VERB.redrive.button}
            </button>
            <button type="button" class="link" onClick={onClear}>
              Clear selection
            </button>
          </>
        )}
        {progress && (
          <span role="status">
            Working: {progress.done} of {runs(progress.of)}…
          </span>
        )}
      </div>
      {asking && n > 0 && (
        <div class="confirm" role="group" aria-label={`${VERB[asking].ask} ${runs(n)}?`}>
          <span>
            {asking === 'cancel'
              ? `Cancel the ${runs(n)} selected, stopping their running work? Those that ended are skipped.`
              : `Redrive the ${runs(n)} selected from where they stopped? Only failed and cancelled runs can be; the others are skipped.`}
          </span>
          <button
            type="button"
            class={asking === 'cancel' ? 'danger' : 'primary'}
            onClick={() => void act(asking)}
          >
            {VERB[asking].ask} {runs(n)}
          </button>
          <button type="button" onClick={() => setAsking(undefined)}>
            Do nothing
          </button>
        </div>
      )}
      {outcome && <OutcomeLine outcome={outcome} onClose={() => setOutcome(undefined)} />}
    </section>
  );
}

function OutcomeLine({ outcome, onClose }: { outcome: SelectionOutcome; onClose: () => void }) {
  const codes = [...new Set(outcome.skipped.map((s) => s.code))];
  return (
    <div class="outcome" role="status" data-testid="selection-outcome">
      <span>
        <strong data-testid="acted">{outcome.acted}</strong> {VERB[outcome.action].done},{' '}
        <strong data-testid="skipped">{outcome.skipped.length}</strong> skipped
        {codes.length > 0 && <span class="muted"> ({codes.join(', ')})</span>},{' '}
        <strong data-testid="failed">{outcome.failed.length}</strong> failed
      </span>
      <button type="button" class="link" onClick={onClose}>
        dismiss
      </button>
      {outcome.failed.length > 0 && (
        <ul class="failures">
          {outcome.failed.slice(0, 10).map((f) => (
            <li key={f.runId}>
              <a class="mono" href={`/runs/${f.runId}`}>
                {f.runId}
              </a>
              : <span class="err-text">{f.problem}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
