/**
 * The typed form of a directive, produced by the parser (or by the graph reader from RYE's YAML
 * graphs) and consumed by the compiler. Plain data: it can be serialised and cached.
 *
 * Glossary: a *process* is the list of nodes that run in order; a *node* is a step or a parallel
 * block; a step holds exactly one *action*.
 *
 * The directive itself is declared here; its parts, each in a file of its own (`value-spec.ts`,
 * `action.ts`, `process-node.ts`, `trigger-decl.ts`, `diagnostic.ts`), are exported from here too,
 * so that the whole AST is one import.
 */
import type { SourceLocation } from '../errors/source-location.js';
import type { ShellNeed } from '../values/value-shape.js';
import type { Diagnostic } from './diagnostic.js';
import type { InputType } from './input-types.js';
import type { ProcessNode } from './process-node.js';
import type { RunSettings } from './run-settings.js';
import type { EventDecl, ScheduleDecl } from './trigger-decl.js';
import type { ValueSpec } from './value-spec.js';

export type * from './action.js';
export type { Diagnostic } from './diagnostic.js';
export type * from './process-node.js';
export type { EventDecl, ScheduleDecl } from './trigger-decl.js';
export type { ConcurrencyDecl, RunSettings, TagDecl } from './run-settings.js';
export { COMPARE_OPS, type CompareOp, type Condition, type ValueSpec } from './value-spec.js';

export { INPUT_TYPES, type InputType } from './input-types.js';

/** `<input name type required default>description</input>`. */
export interface InputDecl {
  name: string;
  type: InputType;
  required: boolean;
  /**
   * Written `required="false"`: never asked for at start, even where the process reads it without
   * a default (see `input-uses.ts`); the run then fails where it reads it, if it is missing.
   */
  optional: boolean;
  /** Already coerced to `type`. */
  default: unknown;
  hasDefault: boolean;
  description: string | undefined;
  loc: SourceLocation;
}

/** An input standing in a shell command where its value must have a shape (see {@link Directive.valueChecks}). */
export interface InputValueCheck {
  /** The input. */
  input: string;
  /** Keys below it (`${inputs.x.y}` → `["y"]`). */
  path: string[];
  /** Its template text, for messages (`{input:x}`). */
  label: string;
  needs: ShellNeed[];
  /** A list stands there as one word per element: each element is checked. */
  eachElement: boolean;
  /** The `<param>` it stands in. */
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
  /** `<tag>`, `<priority>` and `<concurrency>` of its `<metadata>` (see `run-settings.ts`). */
  runSettings: RunSettings;
  /** Graphs without a return output return their final state instead of declared outputs. */
  returnsState: boolean;
  process: ProcessNode[];
  /** Initial `state` (RYE graphs' `config.state`); empty for directives. */
  initialState: Record<string, unknown>;
  /** RYE's documentary metadata (`model`, `hooks`, `context`, …), kept as plain data. */
  metadata: Record<string, unknown>;
  /** `<success_criteria>` criteria, kept as documentation. */
  successCriteria: string[];
  /**
   * Inputs that stand where a shell command would read more than data in them (an integer in
   * arithmetic, no leading `-` in an option position, …): a run whose inputs do not have the
   * shape is refused before anything runs (`UNSAFE_VALUE`). Filled by validation.
   */
  valueChecks: InputValueCheck[];
  /** The signature line, if any (`<!-- rye:signed:… -->`). */
  signature: string | undefined;
  source: DirectiveSource;
  warnings: Diagnostic[];
}
