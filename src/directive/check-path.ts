/**
 * Checks one path that a template, a condition or an expression reads (`${inputs.name}`,
 * `path="state.count"`, `steps.fetch.result.items` in `expr="…"`) against what the directive
 * declares: its inputs, the state its `<assign>`s write, its steps and what a step's record
 * holds, the fields of a declared answer, the loop variables in scope. Pure.
 */
import { closest, didYouMean } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';
import { CLOCK_ROOTS } from '../expr/scope.js';
import type { AnswerDecl, InputType, StepNode } from './ast.js';
import type { ValidationContext } from './validation-context.js';

/** What a value sees besides the run's data. */
export interface Where {
  /** The loop variables in scope: a foreach's `as` and `as_index`. */
  readonly vars: readonly string[];
  /** The step whose `result` the value reads (its `<assign>`s and edges), when there is one. */
  readonly step?: StepNode;
}

/** No loop variables, no step's result: outputs, conditions, most values. */
export const NOWHERE: Where = { vars: [] };

/** A path as a value reads it. */
export interface PathRead {
  root: string;
  /** The keys after the root. */
  path: readonly string[];
  /** As written (`${inputs.x}`, `inputs.x`), for messages. */
  raw: string;
  /** What reads it: which roots it may name depends on it. */
  syntax: 'template' | 'condition' | 'expression';
  /** The text of the expression that reads it, for messages. */
  expression?: string;
}

/** The roots templates and conditions read (`input` is RYE's `{input:x}`). */
const TEMPLATE_ROOTS = [
  'inputs',
  'state',
  'steps',
  'result',
  'error',
  'env',
  'input',
  ...CLOCK_ROOTS,
];
/** The roots expressions read: the environment and the clock are the templates' only. */
const EXPRESSION_ROOTS = ['inputs', 'state', 'steps', 'result', 'error'];
/** What a step's record holds (`${steps.NAME.status}`). */
export const STEP_FIELDS = ['status', 'result', 'error', 'attempts', 'startedAt', 'endedAt'];
/** What an error holds (`${error.message}`, `${steps.NAME.error.code}`). */
export const ERROR_FIELDS = ['code', 'message', 'retryable', 'hint', 'location', 'details'];
/** Types whose values have no fields. */
const SCALAR_TYPES: readonly InputType[] = ['string', 'integer', 'number', 'boolean'];

/**
 * Reports (as `UNKNOWN_TEMPLATE_PATH` at `loc`) a path that names an input that is not declared,
 * a step that does not exist or a field its record does not have, state nothing assigns, a field
 * a declared answer does not have, or a root the value cannot read. `lenientState`: a
 * condition's `path` may test state that is not assigned yet.
 */
export function checkPath(
  read: PathRead,
  loc: SourceLocation,
  ctx: ValidationContext,
  where: Where,
  lenientState = false,
): void {
  const { root, path } = read;
  const head = path[0] ?? '';
  const fail = (message: string, hint: string) =>
    ctx.diag.error(ErrorCode.UNKNOWN_TEMPLATE_PATH, `${labelOf(read)}: ${message}`, loc, hint);
  // Built-in roots win over loop variables of the same name, as they do when the run reads them.
  switch (root) {
    case 'input':
    case 'inputs':
      if (read.syntax === 'expression' && root === 'input') break;
      return checkInput(read, ctx, fail);
    case 'steps':
      return checkStep(read, ctx, fail);
    case 'state':
      if (!lenientState && head !== '' && !ctx.stateKeys.has(head)) {
        fail(
          `nothing assigns "${head}" to state.${didYouMean(head, ctx.stateKeys)}`,
          read.syntax === 'expression'
            ? `Assign it first with <assign name="${head}" …/>, or fix the name; assigned: ${[...ctx.stateKeys].join(', ') || 'nothing'}.`
            : `Assign it first with <assign name="${head}" …/>, or write \${state.${head}?} when it may be missing.`,
        );
      }
      return;
    case 'result':
      if (where.step !== undefined) checkAnswer(answerOf(where.step), path, 'this step', fail);
      return;
    case 'error':
      if (head !== '' && !ERROR_FIELDS.includes(head)) fieldOfError(head, fail);
      return;
  }
  const roots = read.syntax === 'expression' ? EXPRESSION_ROOTS : TEMPLATE_ROOTS;
  if (roots.includes(root) || where.vars.includes(root)) return;
  const readable = [...roots.filter((r) => r !== 'input'), ...where.vars];
  if (
    read.syntax === 'expression' &&
    (root === 'env' || root === 'input' || root.startsWith('_'))
  ) {
    const near = root === 'input' ? 'inputs' : undefined;
    fail(
      `an expression does not read "${root}".${near ? ` Did you mean "${near}"?` : ''}`,
      `Expressions read ${readable.join(', ')}; the environment and the clock are read by templates in a value="…" ({env:NAME}, \${_now}).`,
    );
    return;
  }
  const near = closest(root, [...roots, ...where.vars]);
  fail(
    `"${root}" is not something ${read.syntax === 'expression' ? 'an expression' : 'a template'} can read.${near ? ` Did you mean "${near}"?` : ''}`,
    `${read.syntax === 'expression' ? 'Expressions' : 'Templates'} read ${readable.join(', ')}.`,
  );
}

type Fail = (message: string, hint: string) => void;

function labelOf(read: PathRead): string {
  if (read.syntax !== 'expression') return read.raw;
  const text = read.expression ?? '';
  return `${read.raw} (in expr "${text.length > 60 ? `${text.slice(0, 57)}...` : text}")`;
}

/** `inputs.NAME…`: a declared input, and no field of one whose type has none. */
function checkInput(read: PathRead, ctx: ValidationContext, fail: Fail): void {
  const [head = '', field] = read.path;
  if (!ctx.checkInputs || head === '') return;
  const decl = ctx.d.inputs.find((i) => i.name === head);
  if (decl === undefined) {
    const declared = ctx.d.inputs.map((i) => i.name);
    fail(
      `no input named "${head}" is declared.${didYouMean(head, declared)}`,
      `Declare it with <input name="${head}" …> or fix the name; declared: ${declared.join(', ') || 'none'}.`,
    );
  } else if (field !== undefined && SCALAR_TYPES.includes(decl.type)) {
    fail(
      `input "${head}" is ${article(decl.type)} ${decl.type}: it has no field "${field}".`,
      `Read the input itself, or declare it type="object" if it holds fields.`,
    );
  }
}

/** `steps.NAME.FIELD…`: a step that exists, a field its record has, a field of its answer. */
function checkStep(read: PathRead, ctx: ValidationContext, fail: Fail): void {
  const [name = '', field, ...rest] = read.path;
  if (name === '') return;
  if (!ctx.names.has(name)) {
    fail(
      `no step is named "${name}".${didYouMean(name, ctx.names.keys())}`,
      'Name an existing step.',
    );
    return;
  }
  if (field === undefined) return;
  if (!STEP_FIELDS.includes(field)) {
    fail(
      `a step's record has no field "${field}".${didYouMean(field, STEP_FIELDS)}`,
      `A step's record holds ${STEP_FIELDS.join(', ')}.`,
    );
  } else if (field === 'result') {
    const step = ctx.steps.get(name);
    if (step !== undefined) checkAnswer(answerOf(step), rest, `step "${name}"`, fail);
  } else if (field === 'error' && rest[0] !== undefined && !ERROR_FIELDS.includes(rest[0])) {
    fieldOfError(rest[0], fail);
  }
}

function fieldOfError(field: string, fail: Fail): void {
  fail(
    `an error has no field "${field}".${didYouMean(field, ERROR_FIELDS)}`,
    `An error holds ${ERROR_FIELDS.join(', ')}.`,
  );
}

/** The answer a step's `<instruction>` or `<wait>` declares, if it declares one. */
function answerOf(step: StepNode): AnswerDecl | undefined {
  const a = step.action;
  return a.type === 'instruction' || a.type === 'wait' ? a.answer : undefined;
}

/** Keys read from the result of a step whose answer is declared: fields it declares. */
function checkAnswer(
  answer: AnswerDecl | undefined,
  path: readonly string[],
  whose: string,
  fail: Fail,
): void {
  const [head, next] = path;
  if (answer === undefined || head === undefined) return;
  if (answer.kind === 'whole') {
    if (SCALAR_TYPES.includes(answer.type))
      fail(
        `the answer of ${whose} is ${article(answer.type)} ${answer.type}: it has no field "${head}".`,
        'Read the answer itself, or declare its fields with <answer name="…" type="…"/>.',
      );
    return;
  }
  const names = answer.fields.map((f) => f.name);
  const field = answer.fields.find((f) => f.name === head);
  if (field === undefined) {
    fail(
      `the answer of ${whose} has no field "${head}".${didYouMean(head, names)}`,
      `Its <answer>s: ${names.join(', ')}.`,
    );
  } else if (next !== undefined && SCALAR_TYPES.includes(field.type)) {
    fail(
      `answer field "${head}" of ${whose} is ${article(field.type)} ${field.type}: it has no field "${next}".`,
      `Read the field itself, or declare it type="object" if it holds fields.`,
    );
  }
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? 'an' : 'a';
}
