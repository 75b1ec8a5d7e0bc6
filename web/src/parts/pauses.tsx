/**
 * Pauses: a directive, or the whole deployment, paused by an operator holds its runs' next steps
 * (they wait with status `paused`) until it is resumed. The pauses in force are read from
 * `GET /v1/pauses`, and set or lifted with `POST /v1/pause` / `POST /v1/resume` (`{"all": true}`)
 * and `POST /v1/directives/<id>/pause|resume`. A server without these routes shows none of this.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import type { PauseState } from '../types';
import { ApiProblem } from './api-problem';

/** What a pause is about: a directive (item id), or everything. */
export type PauseTarget = { directive: string } | { all: true };

/** The pauses in force (undefined while they load or where the server has none), and acting on them. */
export function usePauses() {
  const [state, setState] = useState<PauseState | undefined>();
  const [error, setError] = useState<unknown>();
  const load = () =>
    api<PauseState>('GET', '/v1/pauses').then(
      (s) => setState(s),
      (e: unknown) => {
        // A server from before pauses: nothing to show.
        if (!(e instanceof ApiError && e.status === 404)) setError(e);
      },
    );
  useEffect(() => void load(), []);
  const act = async (how: 'pause' | 'resume', target: PauseTarget) => {
    setError(undefined);
    try {
      const path =
        'all' in target
          ? `/v1/${how}`
          : `/v1/directives/${encodeURIComponent(target.directive)}/${how}`;
      const answer = await api<PauseState | { paused: PauseState; resumed: number }>(
        'POST',
        path,
        'all' in target ? { all: true } : undefined,
      );
      setState('paused' in answer ? answer.paused : answer);
    } catch (e) {
      setError(e);
    }
  };
  return {
    state,
    error,
    pause: (t: PauseTarget) => act('pause', t),
    resume: (t: PauseTarget) => act('resume', t),
  };
}

/** Whether `state` holds the runs of `directive`, and by which pause. */
export function pauseOf(state: PauseState | undefined, directive: string): PauseTarget | undefined {
  if (state === undefined) return undefined;
  if (state.directives.includes(directive)) return { directive };
  if (state.all) return { all: true };
  return undefined;
}

/** The run list's: whether everything or some directives are paused, and pausing everything. */
export function DeploymentPause() {
  const { state, error, pause, resume } = usePauses();
  const [asking, setAsking] = useState(false);
  if (state === undefined) return error === undefined ? null : <ApiProblem error={error} />;
  return (
    <div class="pauses" role="group" aria-label="Pauses">
      {state.all ? (
        <p class="paused-note" role="status">
          <span class="badge st-paused">paused</span> Everything is paused: runs hold their next
          steps.{' '}
          <button type="button" class="primary" onClick={() => void resume({ all: true })}>
            Resume everything
          </button>
        </p>
      ) : asking ? (
        <span class="confirm" role="group" aria-label="Pause everything?">
          <span>Pause every directive? Runs finish the steps they are in and hold the next.</span>
          <button
            type="button"
            class="danger"
            onClick={() => {
              setAsking(false);
              void pause({ all: true });
            }}
          >
            Pause everything
          </button>
          <button type="button" onClick={() => setAsking(false)}>
            Leave it
          </button>
        </span>
      ) : (
        <button type="button" onClick={() => setAsking(true)}>
          Pause everything…
        </button>
      )}
      {state.directives.length > 0 && (
        <p class="paused-note">
          Paused directives:{' '}
          {state.directives.map((d) => (
            <span class="tag mono" key={d}>
              <a href={`/directives/${d}`}>{d}</a>{' '}
              <button
                type="button"
                class="link"
                aria-label={`Resume ${d}`}
                onClick={() => void resume({ directive: d })}
              >
                resume
              </button>
            </span>
          ))}
        </p>
      )}
      <ApiProblem error={error} />
    </div>
  );
}

/** A directive's page's: whether it is paused, and pausing or resuming it. */
export function DirectivePause({ directive }: { directive: string }) {
  const { state, error, pause, resume } = usePauses();
  if (state === undefined) return error === undefined ? null : <ApiProblem error={error} />;
  const paused = state.directives.includes(directive);
  return (
    <div class="pauses" role="group" aria-label="Pause">
      {paused && <span class="badge st-paused">paused</span>}
      {state.all && !paused && (
        <span class="muted small">
          Everything is paused (<a href="/">resume it in the run list</a>).
        </span>
      )}
      {paused ? (
        <button type="button" class="primary" onClick={() => void resume({ directive })}>
          Resume directive
        </button>
      ) : (
        <button
          type="button"
          title="Its runs finish the steps they are in and hold the next until it is resumed"
          onClick={() => void pause({ directive })}
        >
          Pause directive
        </button>
      )}
      <ApiProblem error={error} />
    </div>
  );
}

/** A paused run's page's: the pause that holds it, and lifting that pause. */
export function RunPause({ directive, onResumed }: { directive: string; onResumed: () => void }) {
  const { state, error, resume } = usePauses();
  const held = pauseOf(state, directive);
  return (
    <div class="paused-note" role="status">
      <span>
        The run holds its next steps:{' '}
        {held === undefined
          ? 'a pause holds it.'
          : 'all' in held
            ? 'everything is paused.'
            : `its directive ${directive} is paused.`}
      </span>{' '}
      {held && (
        <button
          type="button"
          class="primary"
          onClick={() => void resume(held).then(onResumed)}
          title="Lifts the pause: every run it holds goes on"
        >
          {'all' in held ? 'Resume everything' : `Resume ${directive}`}
        </button>
      )}
      <ApiProblem error={error} />
    </div>
  );
}
