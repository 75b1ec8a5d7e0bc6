/**
 * The events of a run's feed (DESIGN.md, "One event feed per run"): everything that watches a run
 * (the CLI's progress, `wait`, server-sent events, the console, a library's `watch`) reads one
 * ordered feed of these. Embedded, the feed lives in this process; on Redis, the driver writes it
 * with the run's own writes (`redis/run-store/`), so a step that starts and ends between two looks
 * is never missed, and an event is in the feed exactly when the state it tells of is stored.
 *
 * A feed also carries the step events of the run's child directives (their `runId` says whose).
 * Every event has an `id`, increasing within the feed: a consumer that lost its connection goes on
 * after the last id it saw (server-sent events' `Last-Event-ID`).
 */
import type { SerializedError } from '../errors/dirigent-error.js';
import type { EngineObserver } from '../engine/engine-options.js';
import type { RedriveEntry, RunRecord, StepEntry, WaitingStep } from '../engine/run-record.js';

/** What every event has. */
interface FeedEventBase {
  /** Where the event stands in its feed: opaque, increasing; resume after it with `after`. */
  id: string;
  /** The run the event is about: the feed's run, or one of its child runs. */
  runId: string;
  /** When it happened (epoch ms). */
  at: number;
}

/** An event as a run's driver writes it into the feed (before the feed gives it an id). */
export type RunEventBody =
  /** A run began: its first state is stored. */
  | { type: 'run.started'; runId: string; at: number; directive: string }
  /** An attempt of a step began (`attempt` 1 is the step's start, more are its retries). */
  | { type: 'step.started'; runId: string; at: number; step: string; attempt: number }
  /** An attempt failed and the step will try again after `delayMs`. */
  | {
      type: 'step.retrying';
      runId: string;
      at: number;
      step: string;
      error: SerializedError;
      delayMs: number;
    }
  /** A step ended (completed, failed, skipped or cancelled): its entry in the run record. */
  | ({ type: 'step.ended'; runId: string; at: number; step: string } & StepEntry)
  /** The run waits for signals: nothing runs until one arrives. */
  | { type: 'run.waiting'; runId: string; at: number; waiting: WaitingStep[] }
  /** Its directive is paused: the run holds `steps` until it is resumed. */
  | { type: 'run.paused'; runId: string; at: number; steps: string[] }
  /**
   * The run ended; `record` is its final record. The feed's last event, unless the run is
   * redriven.
   */
  | { type: 'run.ended'; runId: string; at: number; record: RunRecord }
  /** A run that failed or was cancelled goes on again: `redrive` says from which steps, and who asked. */
  | { type: 'run.redriven'; runId: string; at: number; redrive: RedriveEntry };

/** An event of a run's feed. */
export type StoredFeedEvent = RunEventBody & FeedEventBase;

/**
 * What a consumer of a feed receives: the run's record as it stood when it began to follow
 * (`run.state`, first unless it resumed after an id still in the feed), then the feed's events
 * after that record, in order. `run.state` is sent again when a consumer resumes after an id the
 * feed no longer holds (it was trimmed, or the run is not where it was): its `id` is the position
 * the record stands at.
 */
export type RunFeedEvent =
  | StoredFeedEvent
  | { type: 'run.state'; id: string; runId: string; at: number; record: RunRecord };

/** The event types of a feed, in the order a run's first events come. */
export const RUN_FEED_EVENT_TYPES = [
  'run.state',
  'run.started',
  'step.started',
  'step.retrying',
  'step.ended',
  'run.waiting',
  'run.paused',
  'run.ended',
  'run.redriven',
] as const satisfies readonly RunFeedEvent['type'][];

/**
 * An {@link EngineObserver} that turns what an engine tells into feed events, handed to `write`
 * (with the run the event is about). `runStarted` is told by the engine when a run begins. An
 * event holds what the engine told as it is (`run.ended`'s record, `run.waiting`'s list): a
 * writer that keeps events rather than serializing them at once keeps a copy.
 */
export function feedObserver(write: (event: RunEventBody) => void): EngineObserver {
  return {
    runStarted: (record) =>
      write({
        type: 'run.started',
        runId: record.runId,
        at: record.startedAt,
        directive: record.directive,
      }),
    stepStarted: (runId, step, attempt) =>
      write({ type: 'step.started', runId, at: Date.now(), step, attempt }),
    stepRetrying: (runId, step, error, delayMs) =>
      write({ type: 'step.retrying', runId, at: Date.now(), step, error, delayMs }),
    stepEnded: (runId, entry) =>
      write({ type: 'step.ended', runId, at: Date.now(), step: entry.name, ...entry }),
    runWaiting: (runId, waiting) => write({ type: 'run.waiting', runId, at: Date.now(), waiting }),
    runPaused: (runId, steps) => write({ type: 'run.paused', runId, at: Date.now(), steps }),
    runEnded: (record) =>
      write({
        type: 'run.ended',
        runId: record.runId,
        at: record.endedAt ?? Date.now(),
        record,
      }),
    runRedriven: (runId, entry) =>
      write({ type: 'run.redriven', runId, at: entry.at, redrive: entry }),
  };
}

/**
 * Tells `observer` what `event` says, as the engine would have: the way a face that shows
 * progress through an observer (the CLI) reads a feed. `run.state` tells nothing.
 */
export function tellObserver(event: RunFeedEvent, observer: EngineObserver): void {
  switch (event.type) {
    case 'run.started':
      // The record's other fields are not in the event; an observer of starts reads the id.
      return observer.runStarted?.({
        runId: event.runId,
        directive: event.directive,
        status: 'running',
        outputs: null,
        steps: [],
        error: null,
        startedAt: event.at,
        endedAt: null,
      });
    case 'step.started':
      return observer.stepStarted?.(event.runId, event.step, event.attempt);
    case 'step.retrying':
      return observer.stepRetrying?.(event.runId, event.step, event.error, event.delayMs);
    case 'step.ended':
      return observer.stepEnded?.(event.runId, entryOf(event));
    case 'run.waiting':
      return observer.runWaiting?.(event.runId, event.waiting);
    case 'run.paused':
      return observer.runPaused?.(event.runId, event.steps);
    case 'run.ended':
      return observer.runEnded?.(event.record);
    case 'run.redriven':
      return observer.runRedriven?.(event.runId, event.redrive);
    case 'run.state':
      return;
  }
}

/** The run record's step entry a `step.ended` event carries. */
export function entryOf(event: Extract<RunFeedEvent, { type: 'step.ended' }>): StepEntry {
  const { name, status, attempts, durationMs, error } = event;
  return { name, status, attempts, durationMs, ...(error !== undefined && { error }) };
}

/**
 * Whether `event` settles a follower of `runId`: the run ended, or waits (the last event a run
 * tells before it rests), or the state it was first seen in was one of those.
 */
export function settles(event: RunFeedEvent, runId: string): boolean {
  if (event.runId !== runId) return false;
  if (event.type === 'run.ended' || event.type === 'run.waiting' || event.type === 'run.paused')
    return true;
  return (
    event.type === 'run.state' &&
    ['completed', 'failed', 'cancelled', 'waiting', 'paused'].includes(event.record.status)
  );
}

/** Whether `event` is the last a feed of `runId` tells: the run ended. */
export function ends(event: RunFeedEvent, runId: string): boolean {
  if (event.runId !== runId) return false;
  if (event.type === 'run.ended') return true;
  return (
    event.type === 'run.state' && ['completed', 'failed', 'cancelled'].includes(event.record.status)
  );
}
