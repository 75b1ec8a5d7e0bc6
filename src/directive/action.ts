/** What a step does: its one action (part of the AST, see `ast.ts`). */
import type { SourceLocation } from '../errors/source-location.js';
import type { ValueSpec } from './value-spec.js';
import type { InputType } from './input-types.js';

/** Failure policy of `foreach` and `parallel`: cancel the rest at the first failure, or go on. */
export type FailurePolicy = 'fail_fast' | 'continue';

/** One `<param>` of an `<execute>`. */
export interface ParamSpec {
  name: string;
  value: ValueSpec;
  loc: SourceLocation;
  /**
   * `allow_options="true"`: its values may begin with `-` where a program reads options (they
   * are meant to be options); otherwise such a value is refused there (`UNSAFE_VALUE`).
   */
  allowOptions?: true;
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

/** The type of an answer: one of the types an `<input>` may have. */
export type AnswerType = InputType;

/** `<answer name type required>description</answer>`: one field of an answer object. */
export interface AnswerField {
  name: string;
  type: AnswerType;
  required: boolean;
  description: string | undefined;
  loc: SourceLocation;
}

/**
 * What an `<instruction>` or `<wait>` must be answered with, from its `<answer>` children: an
 * object with named fields (`fields`), or a payload of one type (`whole`: a single `<answer>`
 * without a name). A signal whose payload does not match is refused (`INVALID_PAYLOAD`).
 */
export type AnswerDecl =
  | { kind: 'fields'; fields: AnswerField[] }
  | { kind: 'whole'; type: AnswerType; description: string | undefined; loc: SourceLocation };

/** `<instruction>` (or a RYE step with no executable action): waits for a person or an agent. */
export interface InstructionAction {
  type: 'instruction';
  /** The text without its `<answer>` children. */
  text: string;
  /** The signal that answers it: the step's name. */
  signal: string;
  timeoutMs: number | undefined;
  /** What the answer must hold; any payload when undefined. */
  answer?: AnswerDecl;
  loc: SourceLocation;
}

/** `<wait signal timeout_seconds>`. */
export interface WaitAction {
  type: 'wait';
  signal: string;
  timeoutMs: number | undefined;
  /** What the signal's payload must hold; any payload when undefined. */
  answer?: AnswerDecl;
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
