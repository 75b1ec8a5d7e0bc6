import type { EngineObserver } from '../engine/engine-options.js';
import type { RunRecord } from '../engine/run-record.js';
import type { RunTrigger } from '../telemetry/run-trace.js';
import type { ReusePolicy } from './idempotency.js';

/** What starts a run. */
export interface StartRequest {
  /** The directive's item id (`.ai/directives/<id>.md` in a space of the project). */
  directive: string;
  inputs?: Record<string, unknown>;
  /** The same key within its window starts one run: later requests get that run. */
  idempotencyKey?: string;
  /**
   * With `idempotencyKey`: when the key's run failed or was cancelled, `failed` starts a new run,
   * which the key then names; `never` (the default) answers that run.
   */
  reuse?: ReusePolicy;
  /**
   * Tags for the run (name → value), besides and over those its directive declares: what runs
   * are found by (`list({ tags })`).
   */
  tags?: Record<string, string>;
  /** What started the run, for its telemetry (default `library`). */
  trigger?: RunTrigger;
  /**
   * 1 to 10, higher first when workers are busy (over the directive's `<priority>`; default 5).
   * Embedded runs start at once, whatever their priority.
   */
  priority?: number;
  /** Hears the run's steps as they go. */
  observer?: EngineObserver;
  /**
   * Let `directive` be a file path too (the CLI: the person at the terminal names files). Never
   * for requests from elsewhere: a path could name any file of the machine.
   */
  allowFile?: boolean;
}

/** A started run: its id, and whether this request started it (false: its idempotency key's run). */
export interface StartedRun {
  runId: string;
  created: boolean;
  /** Its record as it stood when `start` resolved (`queued` on Redis, unless an earlier run). */
  record: RunRecord;
}

/** What reruns a run from one of its steps (see `Dirigent.rerun`). */
export interface RerunRequest {
  /** The step to start at (default: the step the run failed at). */
  from?: string;
  /** Inputs laid over the run's own (the whole validated again). */
  inputs?: Record<string, unknown>;
  /** What asked for the rerun, for its telemetry (default `library`). */
  trigger?: RunTrigger;
  /** 1 to 10, as a start's (see {@link StartRequest.priority}). */
  priority?: number;
  /** Hears the new run's steps as they go. */
  observer?: EngineObserver;
  /** The new run's id (default: a new UUID); asked again with the same id, that run is answered. */
  runId?: string;
}
