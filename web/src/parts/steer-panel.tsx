/**
 * Steering a run from its page: cancel it, answer what it waits for (an `<instruction>`'s text or
 * a signal's JSON payload, checked before it is sent), and run it again with the same inputs or
 * with changes.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { navigate } from '../router';
import type { DirectiveInfo, RunRecord, RunView, WaitingStep } from '../types';
import { InputsForm } from './inputs-form';

const UNDER_WAY = new Set(['queued', 'running', 'waiting']);

/** See the module comment. */
export function SteerPanel({ view, onChanged }: { view: RunView; onChanged: () => void }) {
  const r = view.record;
  return (
    <section class="steer" aria-label="Steer the run">
      {(r.waiting ?? []).map((w) => (
        <Answer
          key={`${w.runId ?? r.runId}:${w.signal}`}
          runId={r.runId}
          waiting={w}
          onSent={onChanged}
        />
      ))}
      <div class="actions">
        {UNDER_WAY.has(r.status) && <CancelButton runId={r.runId} onDone={onChanged} />}
        <Rerun view={view} />
      </div>
    </section>
  );
}

function CancelButton({ runId, onDone }: { runId: string; onDone: () => void }) {
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const cancel = async () => {
    try {
      await api('POST', `/v1/runs/${runId}/cancel`, { reason: 'Cancelled in the console.' });
      setAsking(false);
      onDone();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  if (!asking)
    return (
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        Cancel run…
      </button>
    );
  return (
    <span class="confirm" role="group" aria-label="Cancel the run?">
      <span>Stop the run and its running work?</span>
      <button type="button" class="danger" onClick={() => void cancel()}>
        Cancel run
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Keep it running
      </button>
      {error && <span class="error-text">{error}</span>}
    </span>
  );
}

/** The payload of `text` read `as` text or JSON, or the problem with it. */
export function payloadOf(
  text: string,
  as: 'text' | 'json',
): { payload: unknown } | { problem: string } {
  if (as === 'text') return { payload: text };
  try {
    return { payload: JSON.parse(text.trim() === '' ? 'null' : text) };
  } catch (e) {
    return { problem: `The payload is not JSON: ${(e as Error).message}` };
  }
}

function Answer({
  runId,
  waiting,
  onSent,
}: {
  runId: string;
  waiting: WaitingStep;
  onSent: () => void;
}) {
  const instruction = waiting.text !== undefined;
  const [as, setAs] = useState<'text' | 'json'>(instruction ? 'text' : 'json');
  const [text, setText] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const target = waiting.runId ?? runId;
  const id = `answer-${waiting.signal}`;
  const send = async (e: Event) => {
    e.preventDefault();
    const read = payloadOf(text, as);
    if ('problem' in read) return setError(read.problem);
    setBusy(true);
    setError(undefined);
    try {
      await api('POST', `/v1/runs/${target}/signals/${encodeURIComponent(waiting.signal)}?wait=1`, {
        payload: read.payload,
      });
      onSent();
    } catch (err) {
      const a = err as ApiError;
      setError(`${a.message}${a.hint ? ` ${a.hint}` : ''}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="answer card" onSubmit={(e) => void send(e)} aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>
        {instruction ? 'Instruction' : 'Waiting for signal'}{' '}
        <span class="mono">{waiting.signal}</span>
        {waiting.runId && <span class="muted small"> (child run {waiting.runId.slice(0, 8)})</span>}
      </h3>
      {instruction && <p class="instruction">{waiting.text}</p>}
      {waiting.deadline !== undefined && (
        <p class="muted small">Times out at {new Date(waiting.deadline).toLocaleString()}.</p>
      )}
      <label for={id}>{instruction ? 'Answer' : 'Payload'}</label>
      <textarea
        id={id}
        rows={3}
        spellcheck={false}
        value={text}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        aria-invalid={error !== undefined}
      />
      <div class="row">
        <label class="inline">
          Send as
          <select
            value={as}
            onChange={(e) => setAs((e.target as HTMLSelectElement).value as 'text' | 'json')}
          >
            <option value="text">text</option>
            <option value="json">JSON</option>
          </select>
        </label>
        <button type="submit" disabled={busy}>
          {instruction ? 'Answer' : 'Send signal'}
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

function Rerun({ view }: { view: RunView }) {
  const [editing, setEditing] = useState(false);
  const [info, setInfo] = useState<DirectiveInfo | undefined>();
  const [error, setError] = useState<string | undefined>();
  const directive = view.record.directive;
  useEffect(() => {
    if (!editing || info) return;
    api<{ directives: DirectiveInfo[] }>('GET', '/v1/directives').then(
      (d) => {
        const found = d.directives.find((x) => x.directive === directive);
        if (found) setInfo(found);
        else setError(`The project has no directive ${directive} now.`);
      },
      (e: Error) => setError(e.message),
    );
  }, [editing]);
  const start = async (inputs: Record<string, unknown>) => {
    const run = await api<RunRecord>('POST', '/v1/runs', { directive, inputs });
    navigate(`/runs/${run.runId}`);
  };
  return (
    <>
      <button
        type="button"
        onClick={() => start(view.inputs ?? {}).catch((e: Error) => setError(e.message))}
      >
        Run again
      </button>
      <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)}>
        Run again with changes…
      </button>
      {error && <span class="error-text">{error}</span>}
      {editing && info && (
        <div class="card rerun">
          <InputsForm
            inputs={info.inputs}
            initial={view.inputs ?? {}}
            submitLabel="Start run"
            onSubmit={start}
            idPrefix="rerun"
          />
        </div>
      )}
    </>
  );
}
