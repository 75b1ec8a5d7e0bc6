/**
 * The data a compiled machine carries (its xstate context) and the events that advance it.
 * Everything here is plain JSON so that snapshots can be stored and restored anywhere.
 *
 * Step records are not in the context: a transition must write O(1) data, and copying a record
 * per step into every snapshot grows with the run. They live beside the snapshot (the engine's
 * {@link StepRecord} table, a per-run hash in Redis), and the machine only routes.
 */
import type { SerializedError } from '../errors/dirigent-error.js';
import type { SourceLocation } from '../errors/source-location.js';

/** Status of one step (or parallel block, or branch) in a run. */
export type StepStatus = 'running' | 'waiting' | 'completed' | 'failed' | 'skipped' | 'cancelled';

/** The latest execution of a step, as templates see it (`${steps.NAME.result}`). */
export interface StepRecord {
  status: StepStatus;
  result: unknown;
  error: SerializedError | null;
  attempts: number;
  startedAt: number | null;
  endedAt: number | null;
  /** Which entry of the run this is (its transition count when it started): loops make several. */
  seq?: number;
  /**
   * While the step waits to try again after a retryable failure: when its next attempt is due
   * (epoch ms). `attempts` is then the number of the attempt that failed. Stored, so a run
   * resumed in another process waits out the rest of the delay, not all of it again.
   */
  retryAt?: number;
  /** When the attempt under way times out (epoch ms), for a step with a timeout; a resumed attempt keeps it. */
  deadline?: number;
  /**
   * The step was entered while its directive was paused: it has not begun, and begins when the
   * directive is resumed (see `operations/pause.ts`).
   */
  held?: true;
  /** The `state` keys the step's `<assign>`s (and a foreach's `collect`) wrote when it completed. */
  assigned?: Record<string, unknown>;
  /**
   * The attempts made before the step's latest redrive: they go on counting, and its `<retry>`
   * allows as many attempts again after them.
   */
  redriven?: number;
  /**
   * While the attempt under way has its call run in the process that drives the run (an eager
   * call: no queue keeps its outcome), the worker running it. A run resumed elsewhere counts
   * such a call as lost with that worker.
   */
  runsOn?: string;
}

/**
 * A step record's fields when its first attempt is under way and has not begun (held): a step
 * that begins sets `startedAt` as well. The Redis run store leaves them out of a record that holds
 * them so (`redis/run-store/compact-run-parts.ts`), keeping a step under way small.
 */
export const STEP_UNDER_WAY = {
  status: 'running',
  result: null,
  error: null,
  attempts: 1,
  startedAt: null,
  endedAt: null,
} as const satisfies Partial<StepRecord>;

/** Why a run failed or was cancelled. */
export interface RunError {
  code: string;
  message: string;
  step: string | null;
  /** Where in the directive the failure is, when it is about the directive itself. */
  location?: SourceLocation;
  /**
   * With `COMPENSATION_FAILED`: why the run failed or was cancelled in the first place, before
   * its compensations ran.
   */
  cause?: RunError;
  /** With `COMPENSATION_FAILED`: each compensation that failed for good, in the order they ran. */
  compensations?: { step: string; code: string; message: string }[];
}

/** One item of a foreach step that completed: its index, and the element it went over. */
export interface UndoItem {
  index: number;
  item: unknown;
}

/**
 * A completed step that declares `<compensate>`, as the machine noted it when the step completed:
 * what its compensation undoes, should the run fail or be cancelled later.
 */
export interface UndoEntry {
  step: string;
  /** The step's result (a foreach step's: the array of its items' results). */
  result: unknown;
  /** A foreach step's items that completed (a failed item of `on_failure="continue"` is left out). */
  items?: UndoItem[];
}

/** The context of a run machine. */
export interface RunContext {
  inputs: Record<string, unknown>;
  state: Record<string, unknown>;
  /** The last step error (`${error.message}` in an `on_error` target). */
  error: SerializedError | null;
  runError: RunError | null;
  /** Outputs set by a RYE graph's return node. */
  returned: Record<string, unknown> | null;
  /**
   * The completed steps that declare `<compensate>`, in the order they completed (absent until
   * one has): what the run undoes, in reverse, when it fails or is cancelled.
   */
  undo?: UndoEntry[];
}

/** What a run machine is created with. */
export interface RunInput {
  inputs: Record<string, unknown>;
  state?: Record<string, unknown>;
}

/** The engine settled a step: its result, the assignments it made, and the route it takes. */
export interface StepDoneEvent {
  type: `done:${string}`;
  result: unknown;
  /** `state` keys written by the step's `<assign>`s (and a foreach's `collect`), evaluated. */
  assigned: Record<string, unknown> | null;
  /** Index of the route taken (see `CompiledNode.routes`). */
  edge: number;
  skipped?: boolean;
  /** Outputs of a RYE graph's return node. */
  returned?: Record<string, unknown>;
  /** A foreach step that declares `<compensate>`: the items that completed, for their undoing. */
  items?: UndoItem[];
}

/** A step failed for good: its retries, if any, are spent. */
export interface StepFailedEvent {
  type: `fail:${string}`;
  error: SerializedError;
}

/** Every event a run machine accepts. */
export type RunEvent =
  | StepDoneEvent
  | StepFailedEvent
  | {
      type: 'run.cancel';
      reason?: string;
      /** `false`: the run ends `cancelled` at once, its completed steps left as they are. */
      compensate?: false;
    }
  | { type: 'run.fail'; error: RunError }
  | CompensatedEvent;

/**
 * The engine ran the compensations of a failed or cancelled run: the run ends. `error`, when some
 * failed for good, is the run's error from then on (`COMPENSATION_FAILED`).
 */
export interface CompensatedEvent {
  type: 'compensated';
  error?: RunError;
}
