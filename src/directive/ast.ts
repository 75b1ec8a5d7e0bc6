/**
 * The typed form of a directive, produced by the parser (or by the graph reader from RYE's YAML
 * graphs) and consumed by the compiler. Plain data: it can be serialised and cached.
 *
 * Glossary: a *process* is the list of nodes that run in order; a *node* is a step or a parallel
 * block; a step holds exactly one *action*.
 */
import type { EventDecl, ScheduleDecl } from './read-triggers.js';
import type { SourceLocation } from '../errors/source-location.js';

/**
 * A value written in a directive: a plain literal, a template, a JSONata expression, or (from
 * RYE graphs) a structure whose strings are templates.
 */
export type ValueSpec =
  | { kind: 'literal'; value: unknown }
  | { kind: 'template'; source: string }
  | { kind: 'expr'; source: string }
  | { kind: 'deep'; value: unknown };

/** Comparison operators of RYE's graph conditions. */
export const COMPARE_OPS = [
  'eq',
  'ne',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'contains',
  'regex',
  'exists',
] as const;
/** One of {@link COMPARE_OPS}. */
export type CompareOp = (typeof COMPARE_OPS)[number];

/** A condition: RYE's `{path, op, value}` with `any`/`all`/`not`, or a JSONata expression. */
export type Condition =
  | { kind: 'compare'; path: string; op: CompareOp; value: unknown }
  | { kind: 'any'; of: Condition[] }
  | { kind: 'all'; of: Condition[] }
  | { kind: 'not'; of: Condition }
  | { kind: 'expr'; source: string };

/** Failure policy of `foreach` and `parallel`: cancel the rest at the first failure, or go on. */
export type FailurePolicy = 'fail_fast' | 'continue';

/** One `<param>` of an `<execute>`. */
export interface ParamSpec {
  name: string;
  value: ValueSpec;
  loc: SourceLocation;
}

/** `<execute item_type item_id>`: run a tool, or start a child directive. */
export interface ExecuteAction {
  type: 'execute';
  itemType: 'tool' | 'directive';
  /** May hold templates. */
  itemId: string;
  params: ParamSpec[];
  loc: SourceLocation;
}

/** `<foreach>` around one `<execute>`. */
export interface ForeachAction {
  type: 'foreach';
  over: ValueSpec;
  as: string;
  /** How many items run at once (1 = one after another). */
  parallel: number;
  collect: string | undefined;
  onFailure: FailurePolicy;
  execute: ExecuteAction;
  loc: SourceLocation;
}

/** `<render>`: the step's result is the interpolated text. */
export interface RenderAction {
  type: 'render';
  template: string;
  loc: SourceLocation;
}

/** `<instruction>` (or a RYE step with no executable action): waits for a person or an agent. */
export interface InstructionAction {
  type: 'instruction';
  text: string;
  /** The signal that answers it: the step's name. */
  signal: string;
  timeoutMs: number | undefined;
  loc: SourceLocation;
}

/** `<wait signal timeout_seconds>`. */
export interface WaitAction {
  type: 'wait';
  signal: string;
  timeoutMs: number | undefined;
  loc: SourceLocation;
}

/** A RYE graph's `type: return` node: ends the run with these outputs (or the final state). */
export interface ReturnAction {
  type: 'return';
  output: Record<string, ValueSpec> | undefined;
  loc: SourceLocation;
}

/** A RYE graph's `type: gate` node: no action, only `assign` and `next`. */
export interface GateAction {
  type: 'gate';
  loc: SourceLocation;
}

/** What a step does. */
export type Action =
  | ExecuteAction
  | ForeachAction
  | RenderAction
  | InstructionAction
  | WaitAction
  | ReturnAction
  | GateAction;

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

/** Declared input types. */
export const INPUT_TYPES = ['string', 'integer', 'number', 'boolean', 'array', 'object'] as const;
/** One of {@link INPUT_TYPES}. */
export type InputType = (typeof INPUT_TYPES)[number];

/** `<input name type required default>description</input>`. */
export interface InputDecl {
  name: string;
  type: InputType;
  required: boolean;
  /** Already coerced to `type`. */
  default: unknown;
  hasDefault: boolean;
  description: string | undefined;
  loc: SourceLocation;
}

/** `<output name value>description</output>`; without a value it takes `state.NAME`. */
export interface OutputDecl {
  name: string;
  value: ValueSpec | undefined;
  description: string | undefined;
  loc: SourceLocation;
}

/** `<limits>`: what Dirigent enforces, plus the rest kept as metadata. */
export interface Limits {
  /** Run timeout. */
  durationSeconds: number | undefined;
  /** How deep child directives may nest below this one. */
  depth: number | undefined;
  /** How many child runs this run may start. */
  spawns: number | undefined;
  /** Step transitions before the run fails (default 1000). */
  maxSteps: number | undefined;
  /** RYE's LLM limits (`turns`, `tokens`, `spend`, …), kept and not enforced. */
  other: Record<string, string | number>;
}

/** A warning or error found while reading a directive. */
export interface Diagnostic {
  severity: 'error' | 'warning';
  code: string;
  message: string;
  loc: SourceLocation | undefined;
  hint: string | undefined;
}

/** Where a directive came from. */
export interface DirectiveSource {
  file: string;
  /** SHA-256 of the file's text, hex. */
  hash: string;
  format: 'directive' | 'graph';
}

/** A parsed directive. */
export interface Directive {
  name: string;
  version: string;
  /** The Markdown title (`# Title`). */
  title: string | undefined;
  /** The Markdown between the signature line and the fence. */
  preamble: string;
  description: string | undefined;
  category: string | undefined;
  author: string | undefined;
  limits: Limits;
  /**
   * Capability patterns granted by `<permissions>` (`rye.execute.tool.rye.file-system.*`), or
   * undefined when the directive has no `<permissions>` element.
   */
  permissions: string[] | undefined;
  inputs: InputDecl[];
  outputs: OutputDecl[];
  /**
   * Secrets the directive reads with `{env:NAME}` (`<metadata><secrets><secret name="NAME"/>`):
   * readable although the project does not list them, resolved only where the tool runs (the
   * environment, then the secrets file), and shown as `***` everywhere else.
   */
  secrets: string[];
  /** `<schedule>`s of its `<metadata>`: a run per cron tick (registered by the workers). */
  schedules: ScheduleDecl[];
  /** `<on event>`s of its `<metadata>`: a run per event of each name, its payload as input `event`. */
  events: EventDecl[];
  /** Graphs without a return output return their final state instead of declared outputs. */
  returnsState: boolean;
  process: ProcessNode[];
  /** Initial `state` (RYE graphs' `config.state`); empty for directives. */
  initialState: Record<string, unknown>;
  /** RYE's documentary metadata (`model`, `hooks`, `context`, …), kept as plain data. */
  metadata: Record<string, unknown>;
  /** `<success_criteria>` criteria, kept as documentation. */
  successCriteria: string[];
  /** The signature line, if any (`<!-- rye:signed:… -->`). */
  signature: string | undefined;
  source: DirectiveSource;
  warnings: Diagnostic[];
}

export type { EventDecl, ScheduleDecl } from './read-triggers.js';
