/**
 * The waterfall of a run: one row per pass of a step, a bar from its start to its end on the
 * run's time scale, its attempts, its wait to try again or for a signal (striped), and starts
 * inferred from the order steps ended drawn dashed. A compensation's row (`compensate:NAME`) is
 * marked as such.
 */
import { duration } from '../format';
import type { TimelineRow } from '../types';

/** How the waterfall is drawn. */
export interface TimelineProps {
  rows: TimelineRow[];
  startedAt: number;
  endedAt: number | null;
  selected?: string;
  onSelect?: (step: string) => void;
}

/** See the module comment. */
export function TimelineView({ rows, startedAt, endedAt, selected, onSelect }: TimelineProps) {
  if (rows.length === 0) return <p class="muted">No step has started yet.</p>;
  const now = Date.now();
  const end = Math.max(
    endedAt ?? now,
    ...rows.map((r) => Math.max(r.endedAt ?? now, r.retryAt ?? 0)),
  );
  const span = Math.max(1, end - startedAt);
  const pct = (t: number) => `${(((t - startedAt) / span) * 100).toFixed(3)}%`;
  return (
    <ol class="timeline" aria-label="Steps over time" data-testid="timeline">
      {rows.map((r) => {
        const stop = r.endedAt ?? now;
        const took = stop - r.startedAt;
        const waiting = r.status === 'waiting' || r.retryAt !== undefined;
        const what = `${r.step}${r.compensates !== undefined ? ` (undoes ${r.compensates})` : ''}: ${r.status}, ${duration(took)}${r.attempts > 1 ? `, ${r.attempts} attempts` : ''}${r.retryAt !== undefined ? `, next attempt in ${duration(Math.max(0, r.retryAt - now))}` : ''}${r.estimated ? ' (start inferred)' : ''}`;
        return (
          <li
            class={
              [r.step === selected && 'selected', r.compensates !== undefined && 'compensation']
                .filter(Boolean)
                .join(' ') || undefined
            }
          >
            <button
              type="button"
              class="tl-name"
              onClick={() => onSelect?.(r.step)}
              title={what}
              aria-label={what}
            >
              {r.step}
              {r.attempts > 1 && <span class="tries">×{r.attempts}</span>}
            </button>
            <span class="tl-track">
              <span
                class={`tl-bar st-${r.status}${r.estimated ? ' estimated' : ''}${waiting ? ' waiting' : ''}`}
                style={{
                  left: pct(r.startedAt),
                  width: `max(3px, ${(((stop - r.startedAt) / span) * 100).toFixed(3)}%)`,
                }}
              />
              {r.retryAt !== undefined && (
                <span
                  class="tl-bar retry-wait"
                  style={{ left: pct(stop), width: pct(startedAt + Math.max(0, r.retryAt - stop)) }}
                />
              )}
            </span>
            <span class="tl-took muted">{duration(took)}</span>
          </li>
        );
      })}
    </ol>
  );
}
