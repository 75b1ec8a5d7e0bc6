/**
 * A form generated from a directive's inputs: a field per input fitting its type (text, a whole
 * number, a number, yes/no, JSON for arrays and objects), its description, whether it is required
 * and its default. Every field is checked before anything is sent, and each problem is shown
 * beside its field; what the server still refuses (`INVALID_INPUTS`) is shown the same way.
 */
import { useState } from 'preact/hooks';
import { ApiError } from '../api';
import type { InputInfo } from '../types';

/** How the form is used. */
export interface InputsFormProps {
  inputs: InputInfo[];
  /** Values to start from (a run's inputs, for a run again with edits). */
  initial?: Record<string, unknown>;
  submitLabel: string;
  /** Sends the values; an {@link ApiError} it throws is shown in the form. */
  onSubmit: (values: Record<string, unknown>) => Promise<void>;
  idPrefix?: string;
}

/** The text a field starts with for `value` of `type`. */
function textOf(value: unknown, type: string): string {
  if (value === undefined || value === null) return '';
  if (type === 'array' || type === 'object') return JSON.stringify(value, null, 2);
  return String(value);
}

/** `text` read as a value of `type`, or the problem with it. */
export function readValue(text: string, type: string): { value: unknown } | { problem: string } {
  const t = text.trim();
  switch (type) {
    case 'integer':
      return /^-?\d+$/.test(t) && Number.isSafeInteger(Number(t))
        ? { value: Number(t) }
        : { problem: 'must be a whole number' };
    case 'number':
      return t !== '' && Number.isFinite(Number(t))
        ? { value: Number(t) }
        : { problem: 'must be a number' };
    case 'boolean':
      return t === 'true' || t === 'false'
        ? { value: t === 'true' }
        : { problem: 'must be yes or no' };
    case 'array':
    case 'object': {
      let v: unknown;
      try {
        v = JSON.parse(t);
      } catch (e) {
        return { problem: `is not JSON: ${(e as Error).message}` };
      }
      const ok =
        type === 'array'
          ? Array.isArray(v)
          : typeof v === 'object' && v !== null && !Array.isArray(v);
      return ok ? { value: v } : { problem: `must be a JSON ${type}` };
    }
    default:
      return { value: text };
  }
}

/** See the module comment. */
export function InputsForm({
  inputs,
  initial = {},
  submitLabel,
  onSubmit,
  idPrefix = 'in',
}: InputsFormProps) {
  const [texts, setTexts] = useState<Record<string, string>>(() =>
    Object.fromEntries(
      inputs.map((i) => [i.name, textOf(i.name in initial ? initial[i.name] : undefined, i.type)]),
    ),
  );
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const found: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    for (const i of inputs) {
      const text = texts[i.name] ?? '';
      if (text.trim() === '') {
        if (i.required && i.default === undefined) found[i.name] = 'is required';
        continue;
      }
      const read = readValue(text, i.type);
      if ('problem' in read) found[i.name] = read.problem;
      else values[i.name] = read.value;
    }
    setProblems(found);
    setError(undefined);
    if (Object.keys(found).length > 0) {
      setError('Nothing was sent: correct the fields marked.');
      return;
    }
    setBusy(true);
    try {
      await onSubmit(values);
    } catch (err) {
      const e = err as ApiError;
      setError(`${e.message}${e.hint ? ` ${e.hint}` : ''}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="inputs-form" onSubmit={(e) => void submit(e)} noValidate>
      {inputs.length === 0 && <p class="muted">This directive takes no inputs.</p>}
      {inputs.map((i) => {
        const id = `${idPrefix}-${i.name}`;
        const problem = problems[i.name];
        const set = (v: string) => setTexts((t) => ({ ...t, [i.name]: v }));
        const common = {
          id,
          name: i.name,
          'aria-invalid': problem !== undefined,
          'aria-describedby': `${id}-help`,
        };
        return (
          <div class={`field${problem ? ' invalid' : ''}`}>
            <label for={id}>
              {i.name}{' '}
              <span class="muted small">
                {i.type}
                {i.required ? ', required' : ''}
              </span>
            </label>
            {i.type === 'boolean' ? (
              <select
                {...common}
                value={texts[i.name]}
                onChange={(e) => set((e.target as HTMLSelectElement).value)}
              >
                <option value="">
                  {i.default === undefined ? '(not set)' : `default: ${String(i.default)}`}
                </option>
                <option value="true">yes</option>
                <option value="false">no</option>
              </select>
            ) : i.type === 'array' || i.type === 'object' ? (
              <textarea
                {...common}
                rows={4}
                spellcheck={false}
                value={texts[i.name]}
                placeholder={
                  i.default === undefined
                    ? i.type === 'array'
                      ? '[ ]'
                      : '{ }'
                    : JSON.stringify(i.default)
                }
                onInput={(e) => set((e.target as HTMLTextAreaElement).value)}
              />
            ) : (
              <input
                {...common}
                type="text"
                inputMode={i.type === 'string' ? undefined : 'decimal'}
                value={texts[i.name]}
                placeholder={i.default === undefined ? '' : `default: ${String(i.default)}`}
                onInput={(e) => set((e.target as HTMLInputElement).value)}
              />
            )}
            <span id={`${id}-help`} class="small">
              {problem ? (
                <span class="error-text">{`${i.name} ${problem}`}</span>
              ) : (
                <span class="muted">{i.description ?? ''}</span>
              )}
            </span>
          </div>
        );
      })}
      {error !== undefined && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" disabled={busy}>
        {submitLabel}
      </button>
    </form>
  );
}
