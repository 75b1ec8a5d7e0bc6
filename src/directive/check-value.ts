/**
 * Checks of the values a directive writes (templates, expressions, conditions): each reference
 * names an input that is declared, a step that exists, state that something assigns, or an
 * environment variable the project allows.
 */
import { closest, didYouMean } from '../errors/did-you-mean.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';
import { compareValues } from '../expr/compare.js';
import { compileExpression } from '../expr/expression.js';
import { CLOCK_ROOTS } from '../expr/scope.js';
import { compileTemplate } from '../expr/template.js';
import type { Condition, Directive, ValueSpec } from './ast.js';
import type { Diagnostics } from './diagnostics.js';
import type { DirectiveChecks } from './directive-checks.js';

const FIXED_ROOTS = ['inputs', 'state', 'steps', 'result', 'error', 'env', 'input', ...CLOCK_ROOTS];

/** What the checks of one directive share. */
export interface ValidationContext {
  d: Directive;
  diag: Diagnostics;
  names: Map<string, SourceLocation>;
  stateKeys: Set<string>;
  checkInputs: boolean;
  checks: DirectiveChecks;
  secrets: ReadonlySet<string>;
}

export function checkValue(
  v: ValueSpec,
  loc: SourceLocation,
  ctx: ValidationContext,
  vars: string[],
): void {
  try {
    if (v.kind === 'expr') compileExpression(v.source);
    if (v.kind !== 'template') return;
    for (const ref of compileTemplate(v.source).refs) {
      if (ref.root === 'env') checkEnv(ref.path[0] ?? '', ref.raw, loc, ctx);
      else if (!ref.optional) checkPath(ref.root, ref.path, ref.raw, loc, ctx, vars);
    }
  } catch (err) {
    if (!(err instanceof DirigentError)) throw err;
    ctx.diag.error(err.code, err.message, loc, err.hint);
  }
}

export function checkCondition(
  c: Condition,
  loc: SourceLocation,
  ctx: ValidationContext,
  vars: string[],
): void {
  if (c.kind === 'any' || c.kind === 'all') for (const p of c.of) checkCondition(p, loc, ctx, vars);
  else if (c.kind === 'not') checkCondition(c.of, loc, ctx, vars);
  else if (c.kind === 'expr') checkValue({ kind: 'expr', source: c.source }, loc, ctx, vars);
  else {
    const [root = '', ...path] = c.path.split('.');
    checkPath(root, path, c.path, loc, ctx, vars, true);
    if (c.op === 'regex' && typeof c.value === 'string' && !c.value.includes('{')) {
      // A pattern written in the directive is compiled now, so that a bad one fails validation.
      try {
        compareValues('', 'regex', c.value);
      } catch (err) {
        if (!(err instanceof DirigentError)) throw err;
        ctx.diag.error(err.code, err.message, loc, err.hint);
      }
    }
  }
}

/** Reports an environment variable the project does not allow and the directive does not declare. */
function checkEnv(name: string, raw: string, loc: SourceLocation, ctx: ValidationContext): void {
  if (ctx.checks.envAllow.has(name) || ctx.secrets.has(name)) return;
  ctx.diag.error(
    ErrorCode.ENV_NOT_ALLOWED,
    `${raw}: the environment variable "${name}" is not readable by directives of this project.`,
    loc,
    `Allow it in .ai/config/dirigent.yaml (env_allow: [${name}]) or with DIRIGENT_ENV_ALLOW=${name}; if it is a secret, declare it instead: <metadata><secrets><secret name="${name}"/></secrets></metadata> (it is then shown as *** in run records).`,
  );
}

/** Reports a reference to an input, step or state key that nothing declares or writes. */
function checkPath(
  root: string,
  path: readonly string[],
  raw: string,
  loc: SourceLocation,
  ctx: ValidationContext,
  vars: string[],
  lenientState = false,
): void {
  const head = path[0] ?? '';
  const fail = (message: string, hint: string) =>
    ctx.diag.error(ErrorCode.UNKNOWN_TEMPLATE_PATH, `${raw}: ${message}`, loc, hint);
  if (root === 'inputs' || root === 'input') {
    if (ctx.checkInputs && head !== '' && !ctx.d.inputs.some((i) => i.name === head)) {
      const declared = ctx.d.inputs.map((i) => i.name);
      fail(
        `no input named "${head}" is declared.${didYouMean(head, declared)}`,
        `Declare it with <input name="${head}" …> or fix the name; declared: ${declared.join(', ') || 'none'}.`,
      );
    }
  } else if (root === 'steps') {
    if (head !== '' && !ctx.names.has(head))
      fail(
        `no step is named "${head}".${didYouMean(head, ctx.names.keys())}`,
        'Name an existing step.',
      );
  } else if (root === 'state') {
    if (!lenientState && head !== '' && !ctx.stateKeys.has(head)) {
      fail(
        `nothing assigns "${head}" to state.${didYouMean(head, ctx.stateKeys)}`,
        `Assign it first with <assign name="${head}" …/>, or write \${state.${head}?} when it may be missing.`,
      );
    }
  } else if (!FIXED_ROOTS.includes(root) && !vars.includes(root)) {
    const near = closest(root, [...FIXED_ROOTS, ...vars]);
    fail(
      `"${root}" is not something a template can read.${near ? ` Did you mean "${near}"?` : ''}`,
      `Templates read ${[...FIXED_ROOTS.filter((r) => r !== 'input'), ...vars].join(', ')}.`,
    );
  }
}
