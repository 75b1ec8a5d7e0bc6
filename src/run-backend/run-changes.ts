/**
 * Runs as they change, as a backend tells them: each look of a {@link ChangeSource} answers the
 * runs that are new or changed status since the look before. The operations' run-list feed
 * (`operations/run-list-feed.ts`) polls one for the console's live run list.
 */
import type { RunRecord, RunStatus } from '../engine/run-record.js';

/** A run as a list shows it. */
export interface RunSummary {
  runId: string;
  directive: string;
  status: RunStatus;
  startedAt: number;
  endedAt: number | null;
  error: RunRecord['error'];
  /** How many steps wait for a signal (status `waiting`). */
  waiting?: number;
  /** Its tags, when it has any. */
  tags?: Record<string, string>;
  /** Its inputs in a few words. */
  summary?: string;
}

/** The {@link RunSummary} of a record. */
export function summaryOf(r: RunRecord): RunSummary {
  return {
    runId: r.runId,
    directive: r.directive,
    status: r.status,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
    error: r.error,
    ...(r.waiting !== undefined && r.waiting.length > 0 && { waiting: r.waiting.length }),
    ...(r.tags !== undefined && { tags: r.tags }),
    ...(r.summary !== undefined && { summary: r.summary }),
  };
}

/** Where a feed looks: each call, the runs new or changed since the call before (none on the first). */
export interface ChangeSource {
  poll(): Promise<RunSummary[]>;
}

/** Statuses of runs not ended yet: a run seen in one of them is looked at until it ends. */
export const UNENDED: ReadonlySet<string> = new Set(['queued', 'running', 'waiting', 'paused']);

/**
 * What a {@link ChangeSource} saw last of each run it looks at: its status and start, so that a
 * look tells only what changed, and keeps watching a run that has not ended.
 */
export class SeenRuns {
  private readonly seen = new Map<string, { status: string; startedAt: number }>();
  private primed = false;

  /** Runs seen not ended: a look must find out how they stand now. */
  unended(): string[] {
    return [...this.seen].filter(([, s]) => UNENDED.has(s.status)).map(([id]) => id);
  }

  /**
   * Remembers how each run stands and returns the ids whose status is new or changed (none on the
   * first call); a run with no status (gone) is forgotten.
   */
  update(runs: Iterable<{ runId: string; status: string | null; startedAt: number }>): string[] {
    const changed: string[] = [];
    for (const { runId, status, startedAt } of runs) {
      const before = this.seen.get(runId);
      if (status === null) this.seen.delete(runId);
      else if (before?.status !== status) {
        this.seen.set(runId, { status, startedAt });
        changed.push(runId);
      }
    }
    if (this.primed) return changed;
    this.primed = true;
    return [];
  }

  /** Forgets ended runs started before `time`: they are no longer looked at. */
  prune(time: number): void {
    for (const [id, s] of this.seen)
      if (!UNENDED.has(s.status) && s.startedAt < time) this.seen.delete(id);
  }
}
