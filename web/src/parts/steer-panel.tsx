/**
 * Steering a run from its page: cancel it, answer what it waits for, redrive it or rerun it from a
 * step once it ended (run-operations.tsx), and run it again with the same inputs or with changes. An answer is asked for as the waiting step declares it (its
 * `<answer>`s): an object as a form with a field per declared field, a yes-or-no as two buttons,
 * another type as one field of it; undeclared, as text or JSON. Each is checked before it is sent,
 * and what the server still refuses (`INVALID_PAYLOAD`) is shown with the form.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { navigate } from '../router';
import type { DirectiveInfo, RunRecord, RunView, WaitingStep } from '../types';
import { ApiProblem } from './api-problem';
import { InputsForm } from './inputs-form';
import { RunPause } from './pauses';
import { RedriveButton, redrivable, RerunFromStep } from './run-operations';

/** Statuses of a run that can be cancelled (a paused run too: it holds its next steps). */
const UNDER_WAY = new Set(['queued', 'running', 'waiting', 'paused']);
const ENDED = new Set(['completed', 'failed', 'cancelled']);

/** See the module comment. */
export function SteerPanel({
  view,
  onChanged,
  onRedriven,
}: {
  view: RunView;
  onChanged: () => void;
  /** The run goes on again: follow it. */
  onRedriven: () => void;
}) {
  const r = view.record;
  return (
    <section class="steer" aria-label="Steer the run">
      {r.status === 'paused' && <RunPause directive={r.directive} onResumed={onChanged} />}
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
        {redrivable(r.status) && <RedriveButton record={r} onRedriven={onRedriven} />}
        {ENDED.has(r.status) && <RerunFromStep view={view} />}
        <Rerun view={view} />
      </div>
    </section>
  );
}

function CancelButton({ runId, onDone }: { runId: string; onDone: () => void }) {
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<unknown>();
  const cancel = async () => {
    try {
      await api('POST', `/v1/runs/${runId}/cancel`, { reason: 'Cancelled in the console.' });
      setAsking(false);
      onDone();
    } catch (e) {
      setError(e);
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
      {error !== undefined && <ApiProblem error={error} />}
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

/** One step that waits: its instruction, and a form for its answer as the step declares it. */
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
  const target = waiting.runId ?? runId;
  const id = `answer-${waiting.signal}`;
  const send = async (payload: unknown) => {
    await api('POST', `/v1/runs/${target}/signals/${encodeURIComponent(waiting.signal)}?wait=1`, {
      payload,
    });
    onSent();
  };
  const label = instruction ? 'Answer' : 'Send signal';
  const spec = waiting.answer;
  return (
    <section class="answer card" aria-labelledby={`${id}-title`} data-signal={waiting.signal}>
      <h3 id={`${id}-title`}>
        {instruction ? 'Instruction' : 'Waiting for signal'}{' '}
        <span class="mono">{waiting.signal}</span>
        {waiting.runId && <span class="muted small"> (child run {waiting.runId.slice(0, 8)})</span>}
      </h3>
      {instruction && <p class="instruction">{waiting.text}</p>}
      {waiting.deadline !== undefined && (
        <p class="muted small">Times out at {new Date(waiting.deadline).toLocaleString()}.</p>
      )}
      {spec === undefined ? (
        <FreeAnswer id={id} instruction={instruction} submitLabel={label} send={send} />
      ) : spec.kind === 'fields' ? (
        <InputsForm inputs={spec.fields} submitLabel={label} onSubmit={send} idPrefix={id} />
      ) : (
        <>
          {spec.description !== undefined && <p class="muted small">{spec.description}</p>}
          {spec.type === 'boolean' ? (
            <YesNo title={waiting.text ?? waiting.signal} send={send} />
          ) : (
            <InputsForm
              inputs={[{ name: 'answer', type: spec.type, required: true }]}
              submitLabel={label}
              onSubmit={(values) => send(values.answer)}
              idPrefix={id}
            />
          )}
        </>
      )}
    </section>
  );
}

/** An answer the step does not declare: text, or any JSON (checked before it is sent). */
function FreeAnswer({
  id,
  instruction,
  submitLabel,
  send,
}: {
  id: string;
  instruction: boolean;
  submitLabel: string;
  send: (payload: unknown) => Promise<void>;
}) {
  const [as, setAs] = useState<'text' | 'json'>(instruction ? 'text' : 'json');
  const [text, setText] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const read = payloadOf(text, as);
    if ('problem' in read) return setError(read.problem);
    setBusy(true);
    setError(undefined);
    try {
      await send(read.payload);
    } catch (err) {
      setError(problemOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={(e) => void submit(e)}>
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
          {submitLabel}
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

/** A yes-or-no answer (an unnamed `<answer type="boolean">`): one button for each. */
function YesNo({ title, send }: { title: string; send: (payload: unknown) => Promise<void> }) {
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const answer = async (value: boolean) => {
    setBusy(true);
    setError(undefined);
    try {
      await send(value);
    } catch (err) {
      setError(problemOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <div class="row yes-no" role="group" aria-label={`Answer: ${title}`}>
        <button type="button" disabled={busy} onClick={() => void answer(true)}>
          Yes
        </button>
        <button type="button" disabled={busy} onClick={() => void answer(false)}>
          No
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </>
  );
}

/** What the server said when it refused an answer: its message and hint. */
function problemOf(err: unknown): string {
  const a = err as ApiError;
  return `${a.message}${a.hint ? ` ${a.hint}` : ''}`;
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
