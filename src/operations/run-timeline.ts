/**
 * A run's waterfall: one row per pass of a step (in the order they started), with its attempts,
 * its outcome and when it started and ended; steps under way have no end yet, and say whether
 * they wait to try again (`retryAt`) or for a signal (`deadline`). A compensation is a row of its
 * own (`compensate:NAME`), saying which step it undoes. Pure.
 *
 * Where the times come from: a step's record holds the start and end of its latest pass; the run
 * record lists every pass that ended, in the order they ended, with its duration. An earlier pass
 * of a step that ran again (a loop) has no stored start, so it is placed to end where the pass
 * after it in that list began, and marked `estimated`: exact for a sequence of steps, close for
 * steps of parallel branches.
 */
import type { StepRecord } from '../compiler/run-context.js';
import { COMPENSATE_PREFIX } from '../directive/process-node.js';
import type { RunRecord, StepEntry } from '../engine/run-record.js';

/** One pass of a step in a {@link runTimeline}. */
export interface TimelineRow {
  step: string;
  status: StepEntry['status'] | 'running' | 'waiting';
  /** Tries so far, the first included. */
  attempts: number;
  /** Epoch ms. */
  startedAt: number;
  /** Epoch ms; null while the pass is under way. */
  endedAt: number | null;
  /** The start is inferred from the order passes ended (an earlier pass of a looped step). */
  estimated?: boolean;
  /** While waiting to try again: when the next attempt is due (epoch ms). */
  retryAt?: number;
  /** When the attempt or wait under way times out (epoch ms). */
  deadline?: number;
  error?: { code: string; message: string };
  /** For a compensation (`compensate:NAME`): the step it undoes. */
  compensates?: string;
}

const UNDER_WAY = new Set(['running', 'waiting']);

/** The rows of `record` with the step records `steps` (see the module comment). */
export function runTimeline(record: RunRecord, steps: Record<string, StepRecord>): TimelineRow[] {
  const entries = record.steps;
  const last = new Map<string, number>();
  entries.forEach((e, i) => last.set(e.name, i));
  const rows: TimelineRow[] = new Array<TimelineRow>(entries.length);
  // Backwards: a pass without stored times ends where the one after it began.
  let nextStart = record.endedAt ?? Math.max(record.startedAt, ...ends(steps));
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    const rec = steps[e.name];
    const exact =
      last.get(e.name) === i &&
      rec !== undefined &&
      !UNDER_WAY.has(rec.status) &&
      rec.startedAt !== null;
    const start = exact ? rec.startedAt! : Math.max(record.startedAt, nextStart - e.durationMs);
    const row: TimelineRow = {
      ...base(e),
      startedAt: start,
      // A stopped step's record keeps no end: its entry's duration says when it stopped.
      endedAt: (exact ? rec.endedAt : null) ?? start + e.durationMs,
      ...(!exact && { estimated: true }),
    };
    rows[i] = row;
    nextStart = Math.min(nextStart, row.startedAt);
  }
  for (const [name, rec] of Object.entries(steps)) {
    if (!UNDER_WAY.has(rec.status) || rec.startedAt === null) continue;
    rows.push({
      step: name,
      ...compensates(name),
      status: rec.status as 'running' | 'waiting',
      attempts: rec.attempts,
      startedAt: rec.startedAt,
      endedAt: null,
      ...(rec.retryAt !== undefined && { retryAt: rec.retryAt }),
      ...(rec.deadline !== undefined && { deadline: rec.deadline }),
    });
  }
  return rows.sort((a, b) => a.startedAt - b.startedAt);
}

function base(e: StepEntry): Omit<TimelineRow, 'startedAt' | 'endedAt'> {
  return {
    step: e.name,
    ...compensates(e.name),
    status: e.status,
    attempts: e.attempts,
    ...(e.error && { error: { code: e.error.code, message: e.error.message } }),
  };
}

/** `compensates` of a compensation's row, or nothing (a step's name holds no `:`). */
function compensates(name: string): { compensates?: string } {
  return name.startsWith(COMPENSATE_PREFIX)
    ? { compensates: name.slice(COMPENSATE_PREFIX.length) }
    : {};
}

function ends(steps: Record<string, StepRecord>): number[] {
  return Object.values(steps).flatMap((s) => (s.endedAt === null ? [] : [s.endedAt]));
}
