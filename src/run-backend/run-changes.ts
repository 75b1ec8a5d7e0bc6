/**
 * Runs as they change, for lists that stay up to date (the console's run list, over server-sent
 * events): one poller per {@link Dirigent}, shared by every subscriber, asks the backend's
 * {@link ChangeSource} every `intervalMs` for the runs that are new or changed status, and tells
 * each subscriber in one batch. It runs only while someone listens; what the first look finds is
 * the baseline, not a change (a subscriber lists runs itself after subscribing).
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
  };
}

/** Where a feed looks: each call, the runs new or changed since the call before (none on the first). */
export interface ChangeSource {
  poll(): Promise<RunSummary[]>;
}

/** Called with each batch of changed runs. */
export type FeedListener = (changes: RunSummary[]) => void;

/** See the module comment. */
export class RunFeed {
  private readonly listeners = new Set<FeedListener>();
  private timer: NodeJS.Timeout | undefined;
  private source: ChangeSource | undefined;

  constructor(
    private readonly open: () => ChangeSource,
    private readonly intervalMs = 500,
  ) {}

  /** Tells `listener` of every batch of changes until the returned function is called. */
  subscribe(listener: FeedListener): () => void {
    this.listeners.add(listener);
    if (this.source === undefined) {
      const source = (this.source = this.open());
      void this.look(source);
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size > 0) return;
      clearTimeout(this.timer);
      this.source = undefined;
    };
  }

  private async look(source: ChangeSource): Promise<void> {
    // A failed look (Redis away) tells nothing; the next one finds what changed meanwhile.
    const changes = await source.poll().catch(() => []);
    if (this.source !== source) return;
    if (changes.length > 0)
      for (const listener of this.listeners) {
        try {
          listener(changes);
        } catch {
          // a listener's failure is its own
        }
      }
    this.timer = setTimeout(() => void this.look(source), this.intervalMs);
    this.timer.unref();
  }
}

/** Statuses of runs not ended yet: a run seen in one of them is looked at until it ends. */
export const UNENDED: ReadonlySet<string> = new Set(['queued', 'running', 'waiting']);

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
