/**
 * The data a compiled machine carries (its xstate context) and the events that advance it.
 * Everything here is plain JSON so that snapshots can be stored and restored anywhere.
 */
import type { RetryPolicy } from '../directive/ast.js';
import type { SerializedError } from '../errors/dirigent-error.js';
import type { SourceLocation } from '../errors/source-location.js';

/** Status of one step (or parallel block, or branch) in a run. */
export type StepStatus =
  | 'pending'
  | 'running'
  | 'waiting'
  | 'completed'
  | 'failed'
  | 'skipped'
  | 'cancelled';

/** The latest execution of a step, as templates see it (`${steps.NAME.result}`). */
export interface StepRecord {
  status: StepStatus;
  result: unknown;
  error: SerializedError | null;
  attempts: number;
  startedAt: number | null;
  endedAt: number | null;
  /** Delay before the next retry, set when a retryable failure is to be retried. */
  retryDelayMs?: number;
}

/** Why a run failed or was cancelled. */
export interface RunError {
  code: string;
  message: string;
  step: string | null;
  /** Where in the directive the failure is, when it is about the directive itself. */
  location?: SourceLocation;
}

/** The context of a run machine. */
export interface RunContext {
  inputs: Record<string, unknown>;
  state: Record<string, unknown>;
  steps: Record<string, StepRecord>;
  /** The last step error (`${error.message}` in an `on_error` target). */
  error: SerializedError | null;
  /** Node entries so far, checked against `max_steps`. */
  transitions: number;
  runError: RunError | null;
  /** Outputs set by a RYE graph's return node. */
  returned: Record<string, unknown> | null;
}

/** What a run machine is created with. */
export interface RunInput {
  inputs: Record<string, unknown>;
  state?: Record<string, unknown>;
}

/** The engine settled a step: its result, the assignments it made, and the edge it takes. */
export interface StepDoneEvent {
  type: `done:${string}`;
  result: unknown;
  /** `state` keys written by the step's `<assign>`s, already evaluated. */
  assigned: Record<string, unknown> | null;
  /** Index of the outgoing edge taken (see `CompiledNode.targets`). */
  edge: number;
  skipped?: boolean;
  /** Outputs of a RYE graph's return node. */
  returned?: Record<string, unknown>;
  startedAt?: number;
  endedAt?: number;
}

/** A step attempt failed. */
export interface StepFailedEvent {
  type: `fail:${string}`;
  error: SerializedError;
  /** The retry policy in force (a step's `<retry>` wins over it). */
  policy?: RetryPolicy;
  startedAt?: number;
  endedAt?: number;
}

/** Every event a run machine accepts. */
export type RunEvent =
  | StepDoneEvent
  | StepFailedEvent
  | { type: 'run.cancel'; reason?: string }
  | { type: 'run.fail'; error: RunError };
