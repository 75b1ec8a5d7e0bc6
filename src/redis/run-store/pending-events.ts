/**
 * The feed events a driver's engine has told and its store has not written yet. The engine tells
 * them as things happen (through {@link PendingEvents.observer}); the run store takes a run's
 * pending events into its next save of the run (`redis-run-store.ts`), so they reach the run's
 * feed in the same script as the state they tell of: an event is in the feed exactly when its
 * state is stored, and a write the run's new driver fenced off (it took the run over) writes
 * neither. Every event the engine tells is followed by a save of its run (a checkpoint, or the
 * save of a wait or an end), so nothing stays pending for long.
 *
 * An event of the run whose feed keeps it leaves its `runId` out (the feed's key names the run),
 * and reading puts it back ({@link withRunId}); a child's step events, which its parents' feeds
 * keep too, say whose they are.
 */
import type { EngineObserver } from '../../engine/engine-options.js';
import { feedObserver, type RunEventBody } from '../../run-backend/run-feed-event.js';

/** Events of one run waiting for its next save. */
export interface RunEvents {
  /**
   * Each event as the save script takes it: `+` then its JSON for one that goes to the feeds of
   * the run's parents too (a child's step events), `-` then its JSON for one that does not.
   */
  events: string[];
  /** The run's parents, nearest first, whose feeds get the `+` events. */
  parents: string[];
}

/** See the module comment. */
export class PendingEvents {
  private readonly byRun = new Map<string, RunEvents>();

  /** `parentOf` names the parent of a run live in the engine. */
  constructor(private readonly parentOf: (runId: string) => string | null | undefined) {}

  /** The observer to give the engine. */
  readonly observer: EngineObserver = feedObserver((body) => this.add(body));

  /** Takes the events pending for `runId` (its save writes them), if any. */
  take(runId: string): RunEvents | undefined {
    const pending = this.byRun.get(runId);
    this.byRun.delete(runId);
    return pending;
  }

  /** Puts back events whose save failed before Redis took it: the next save writes them first. */
  restore(runId: string, taken: RunEvents): void {
    const pending = this.byRun.get(runId);
    if (pending === undefined) this.byRun.set(runId, taken);
    else pending.events.unshift(...taken.events);
  }

  /** Forgets the events of a run this process no longer drives (another writes its feed now). */
  drop(runId: string): void {
    this.byRun.delete(runId);
  }

  private add(body: RunEventBody): void {
    let pending = this.byRun.get(body.runId);
    if (pending === undefined)
      this.byRun.set(body.runId, (pending = { events: [], parents: this.parentsOf(body.runId) }));
    // A child's steps are its parents' progress too; its own run.* events are its own.
    if (body.type.startsWith('step.') && pending.parents.length > 0)
      pending.events.push('+' + JSON.stringify(body));
    else pending.events.push('-' + JSON.stringify({ ...body, runId: undefined }));
  }

  private parentsOf(runId: string): string[] {
    const parents: string[] = [];
    const seen = new Set([runId]);
    for (let id = this.parentOf(runId); id != null && !seen.has(id); id = this.parentOf(id)) {
      seen.add(id);
      parents.push(id);
    }
    return parents;
  }
}

/** The JSON opening every event: its type comes first (see `run-backend/run-feed-event.ts`). */
const TYPE_OPENING = '{"type":"';

/**
 * An event's JSON as a feed of run `runId` keeps it, with its `runId` (left out when the event is
 * that run's own) right after its type, where the event had it.
 */
export function withRunId(json: string, runId: string): string {
  if (!json.startsWith(TYPE_OPENING)) return json;
  const after = json.indexOf('",', TYPE_OPENING.length) + 2;
  if (after < 2 || json.startsWith('"runId":', after)) return json;
  return `${json.slice(0, after)}"runId":${JSON.stringify(runId)},${json.slice(after)}`;
}
