/** The nodes of a process: steps and parallel blocks, with their edges (part of the AST, see `ast.ts`). */
import type { SourceLocation } from '../errors/source-location.js';
import type { Action, ExecuteAction, FailurePolicy } from './action.js';
import type { Condition, ValueSpec } from './value-spec.js';

/** `<retry>`: `attempts` counts every try, the first included. */
export interface RetryPolicy {
  attempts: number;
  backoff: 'fixed' | 'exponential';
  delayMs: number;
  maxDelayMs: number;
}

/** One outgoing edge; without `when` it always matches. `$end` completes the run. */
export interface Edge {
  when: Condition | undefined;
  to: string;
  loc: SourceLocation;
}

/** `<assign name value|expr>`: writes `state.NAME` after the step succeeds. */
export interface Assign {
  name: string;
  value: ValueSpec;
  loc: SourceLocation;
}

/** Fields shared by steps and parallel blocks. */
interface NodeBase {
  name: string;
  loc: SourceLocation;
  /** Run the node only when this holds; otherwise it is `skipped`. */
  condition: Condition | undefined;
  assigns: Assign[];
  /** Where to continue when the node fails for good. */
  onError: string | undefined;
  /** Where the `on_error` attribute is written (for errors about its target). */
  onErrorLoc?: SourceLocation;
  /** Explicit edges; undefined means "the next node in document order". */
  next: Edge[] | undefined;
}

/** `<step name>`. */
export interface StepNode extends NodeBase {
  kind: 'step';
  action: Action;
  retry: RetryPolicy | undefined;
  timeoutMs: number | undefined;
  /** `<lock key limit lease_seconds>`: at most `limit` of the step's tool calls at once per key. */
  lock?: StepLock;
  /** `<rate_limit key max per_seconds>`: at most `max` of its tool calls per window per key. */
  rateLimit?: StepRateLimit;
  /** `<description>` of the step, kept as documentation. */
  description: string | undefined;
  /**
   * `<compensate>`: what undoes the step once it completed, should the run fail or be cancelled
   * later (a saga). Only a step whose action is an `<execute>` or a `<foreach>` has one.
   */
  compensate?: Compensation;
}

/**
 * `<compensate>` around one `<execute>`: run in reverse order of completion when the run fails or
 * is cancelled, with `${result}` the result of the step it undoes (of each item, for a foreach
 * step, with the foreach's `as` variables in scope), and recorded as a step `compensate:NAME`.
 */
export interface Compensation {
  /** The tool or child directive that undoes the step. */
  execute: ExecuteAction;
  /** `<retry>` inside `<compensate>`; without it a tool's own policy applies. */
  retry: RetryPolicy | undefined;
  /** `<timeout seconds>` inside `<compensate>`: bounds each attempt. */
  timeoutMs: number | undefined;
  loc: SourceLocation;
}

/**
 * What the name of a compensation's record begins with: `compensate:NAME` undoes step NAME. No
 * step is named so (a step name holds no `:`), so the two never meet in `steps`.
 */
export const COMPENSATE_PREFIX = 'compensate:';

/** The name a compensation is recorded under: `compensate:NAME` for step NAME. */
export function compensationName(step: string): string {
  return COMPENSATE_PREFIX + step;
}

/** A step's concurrency lock; `key` is a template over the run (`repo:${inputs.repo}`). */
export interface StepLock {
  key: string;
  limit: number;
  leaseMs: number;
  loc: SourceLocation;
}

/** A step's rate limit; `key` is a template over the run. */
export interface StepRateLimit {
  key: string;
  max: number;
  durationMs: number;
  loc: SourceLocation;
}

/** `<branch name>` inside `<parallel>`. */
export interface Branch {
  name: string;
  loc: SourceLocation;
  nodes: ProcessNode[];
}

/** `<parallel name on_failure>`. */
export interface ParallelNode extends NodeBase {
  kind: 'parallel';
  onFailure: FailurePolicy;
  branches: Branch[];
}

/** A node of a process. */
export type ProcessNode = StepNode | ParallelNode;
