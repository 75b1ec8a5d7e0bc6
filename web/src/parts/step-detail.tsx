/**
 * One step of a run: its state, attempts and times, its result and its error, and the directive's
 * text beside them with the step's line (or the error's, when it has one) marked.
 */
import { duration, when } from '../format';
import type { RunView } from '../types';
import { JsonBlock } from './json-block';
import { SourceView } from './source-view';
import { StatusBadge } from './status-badge';

/** See the module comment. */
export function StepDetail({ view, step }: { view: RunView; step: string | undefined }) {
  const rec = step === undefined ? undefined : view.steps[step];
  const node = view.graph?.nodes.find((n) => n.step === step && n.kind !== 'join');
  const runError = view.record.error;
  const error = rec?.error ?? (runError && runError.step === step ? runError : null);
  const line = error?.location?.line ?? node?.line;
  return (
    <div class="step-detail">
      <div class="step-facts" aria-live="polite">
        {step === undefined ? (
          <p class="muted">Choose a step in the graph or the timeline to see its result.</p>
        ) : (
          <>
            <h3>
              Step <span class="mono">{step}</span>{' '}
              <StatusBadge status={rec?.status ?? 'pending'} />
            </h3>
            {node?.detail && <p class="muted mono small">{node.detail}</p>}
            {rec && (
              <dl class="facts">
                <dt>attempts</dt>
                <dd>{rec.attempts}</dd>
                {rec.startedAt !== null && (
                  <>
                    <dt>started</dt>
                    <dd>{when(rec.startedAt)}</dd>
                  </>
                )}
                {rec.startedAt !== null && rec.endedAt !== null && (
                  <>
                    <dt>took</dt>
                    <dd>{duration(rec.endedAt - rec.startedAt)}</dd>
                  </>
                )}
                {rec.retryAt !== undefined && (
                  <>
                    <dt>next attempt</dt>
                    <dd>{when(rec.retryAt)}</dd>
                  </>
                )}
              </dl>
            )}
            {error && (
              <div class="error step-error" role="alert" data-testid="step-error">
                <strong class="mono">{error.code}</strong> {error.message}
                {error.location && (
                  <span class="muted small mono">
                    {' '}
                    at line {error.location.line}, column {error.location.column}
                  </span>
                )}
              </div>
            )}
            {rec && rec.result !== null && rec.result !== undefined && (
              <>
                <h4>Result</h4>
                <JsonBlock value={rec.result} label={`Result of ${step}`} />
              </>
            )}
            {view.children
              .filter(
                (c) =>
                  c.step === step || c.step.startsWith(`${step}#`) || c.step.startsWith(`${step}[`),
              )
              .map((c) => (
                <p>
                  Child run{' '}
                  <a href={`/runs/${c.runId}`} class="mono">
                    {c.runId}
                  </a>
                </p>
              ))}
          </>
        )}
      </div>
      {view.source && (
        <SourceView
          file={view.source.file}
          text={view.source.text}
          {...(line !== undefined && { line })}
          mark={error ? 'error' : 'step'}
        />
      )}
    </div>
  );
}
