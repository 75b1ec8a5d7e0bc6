import type { SerializedError } from '../errors/dirigent-error.js';
import type { ToolDispatcher } from '../tools/tool-dispatcher.js';
import type { DirectiveLoader } from './directive-loader.js';
import type { RedriveEntry, RunRecord, StepEntry, WaitingStep } from './run-record.js';
import type { RunStore } from './run-store.js';
import type { Telemetry, TelemetryOptions } from '../telemetry/telemetry.js';

/** Hooks for progress display and telemetry. All optional; they must not throw. */
export interface EngineObserver {
  /** A run began (a new run, not one resumed), before its first step. */
  runStarted?(record: RunRecord): void;
  /** A run that failed or was cancelled goes on again (`entry`: the redrive, as its record keeps it). */
  runRedriven?(runId: string, entry: RedriveEntry): void;
  stepStarted?(runId: string, step: string, attempt: number): void;
  stepEnded?(runId: string, entry: StepEntry): void;
  stepRetrying?(runId: string, step: string, error: SerializedError, delayMs: number): void;
  runWaiting?(runId: string, waiting: WaitingStep[]): void;
  runEnded?(record: RunRecord): void;
  /** A run holds its next steps (`steps`): its directive is paused. */
  runPaused?(runId: string, steps: string[]): void;
  /** Storing a run failed: a waiting run may not be resumable from another process. */
  storeFailed?(runId: string, error: SerializedError | Error): void;
}

/** What an {@link Engine} is built with. */
export interface EngineOptions {
  /** Root of the project: tools are confined to it; child directives resolve in it. */
  projectDir: string;
  dispatcher: ToolDispatcher;
  loader: DirectiveLoader;
  /** Default: a {@link MemoryRunStore}. */
  store?: RunStore;
  /**
   * Environment for `{env:VAR}` templates, of which runs see only what the loader's policy allows
   * (see `policy/run-environment.ts`). Default: `process.env`.
   */
  env?: Record<string, string | undefined>;
  observer?: EngineObserver;
  /**
   * Store the run after every transition, not only when it waits or ends, so that another
   * process can resume it after a crash ({@link Engine.resume}). Used with the Redis store.
   */
  durable?: boolean;
  /** Which directives are paused: their runs hold their next steps (see `operations/pause.ts`). */
  pauses?: PauseView;
  /**
   * Where the runs' spans and metrics go (tracer and meter providers); nothing is recorded
   * without it. See `telemetry/telemetry.ts`.
   */
  telemetry?: Telemetry | TelemetryOptions;
}

/** What an engine asks of the pauses in force, at each step it enters. */
export interface PauseView {
  /** Whether runs of `directive` (an item id) hold their next steps. */
  isPaused(directive: string): boolean;
}

/** Run-level defaults (RYE's resilience defaults for depth and spawns). */
export const ENGINE_DEFAULTS = { maxSteps: 1000, depth: 10, spawns: 50 } as const;
