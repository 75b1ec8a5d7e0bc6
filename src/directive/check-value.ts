/**
 * Checks of the values a directive writes (templates, expressions, conditions): each path they
 * read names an input that is declared, a step that exists (and a field its record has), state
 * that something assigns, a field of a declared answer, or a loop variable in scope
 * (`check-path.ts`); an expression names only functions and variables that exist; an environment
 * variable is one the project allows.
 */
import { closest } from '../errors/did-you-mean.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';
import { compareValues } from '../expr/compare.js';
import { compileExpression, type CompiledExpression } from '../expr/expression.js';
import { EXPRESSION_FUNCTIONS, type ExpressionName } from '../expr/expression-reads.js';
import { compileTemplate, type TemplateRef } from '../expr/template.js';
import type { Condition, ValueSpec } from './ast.js';
import { checkPath, NOWHERE, type PathRead, type Where } from './check-path.js';
import type { ValidationContext } from './validation-context.js';

export { NOWHERE, type Where } from './check-path.js';

/**
 * Checks the value `v`, written at `loc` (or at the attribute that holds it, when the value knows
 * where that is), as seen from `where`.
 */
export function checkValue(
  v: ValueSpec,
  loc: SourceLocation,
  ctx: ValidationContext,
  where: Where = NOWHERE,
): void {
  if (v.kind === 'expr') checkExpression(v.source, v.loc ?? loc, ctx, where);
  else if (v.kind === 'template') checkTemplate(v.source, v.loc ?? loc, ctx, where);
}

/** Checks the template `source` written at `loc`. */
export function checkTemplate(
  source: string,
  loc: SourceLocation,
  ctx: ValidationContext,
  where: Where = NOWHERE,
): void {
  let refs: readonly TemplateRef[];
  try {
    refs = compileTemplate(source).refs;
  } catch (err) {
    report(err, loc, ctx);
    return;
  }
  for (const ref of refs) {
    if (ref.root === 'env') checkEnv(ref.path[0] ?? '', ref.raw, loc, ctx);
    else if (!ref.optional)
      checkPath(
        { root: ref.root, path: ref.path, raw: ref.raw, syntax: 'template' },
        loc,
        ctx,
        where,
      );
  }
}

/** Checks the JSONata expression `source` written at `loc`. */
function checkExpression(
  source: string,
  loc: SourceLocation,
  ctx: ValidationContext,
  where: Where,
): void {
  let compiled: CompiledExpression;
  try {
    compiled = compileExpression(source);
  } catch (err) {
    report(err, loc, ctx);
    return;
  }
  for (const p of compiled.reads.paths) {
    // A literal of its own, not a spread of `p`: this runs for every path of every expression.
    const read: PathRead = {
      root: p.root,
      path: p.path,
      raw: p.raw,
      syntax: 'expression',
      expression: source,
    };
    checkPath(read, loc, ctx, where);
  }
  for (const n of compiled.reads.unbound)
    if (!where.vars.includes(n.name)) unknownName(n, source, loc, ctx, where);
}

/** Reports a `$name` an expression neither binds nor has (`UNKNOWN_FUNCTION`, `UNKNOWN_VARIABLE`). */
function unknownName(
  n: ExpressionName,
  source: string,
  loc: SourceLocation,
  ctx: ValidationContext,
  where: Where,
): void {
  const vars = where.vars;
  if (n.called) {
    const near = closest(n.name, [...EXPRESSION_FUNCTIONS, ...vars]);
    ctx.diag.error(
      ErrorCode.UNKNOWN_FUNCTION,
      `expr "${clip(source)}" calls $${n.name}, which is no function of JSONata's or Dirigent's, nor one the expression binds.${near ? ` Did you mean "$${near}"?` : ''}`,
      loc,
      'See https://docs.jsonata.org for the functions; a function of your own is bound first, e.g. ($twice := function($x) { $x * 2 }; $twice(state.n)).',
    );
  } else {
    const near = closest(n.name, [...vars, ...EXPRESSION_FUNCTIONS]);
    ctx.diag.error(
      ErrorCode.UNKNOWN_VARIABLE,
      `expr "${clip(source)}" reads $${n.name}, which nothing binds.${near ? ` Did you mean "$${near}"?` : ''}`,
      loc,
      vars.length > 0
        ? `Here $${vars.join(' and $')} are bound (the foreach's variables); bind others first with $name := ….`
        : "Variables are bound in the expression ($x := …), or by a foreach around it ($item); read the run's data by path (inputs.x, state.y).",
    );
  }
}

/** Checks the condition `c`, written at `loc` (or at its attribute), as seen from `where`. */
export function checkCondition(
  c: Condition,
  loc: SourceLocation,
  ctx: ValidationContext,
  where: Where = NOWHERE,
): void {
  if (c.kind === 'any' || c.kind === 'all')
    for (const p of c.of) checkCondition(p, loc, ctx, where);
  else if (c.kind === 'not') checkCondition(c.of, loc, ctx, where);
  else if (c.kind === 'expr') checkExpression(c.source, c.loc ?? loc, ctx, where);
  else {
    const path = c.path.split('.');
    const root = path.shift() ?? '';
    const at = c.loc ?? loc;
    checkPath({ root, path, raw: c.path, syntax: 'condition' }, at, ctx, where, true);
    if (c.op === 'regex' && typeof c.value === 'string' && !c.value.includes('{')) {
      // A pattern written in the directive is compiled now, so that a bad one fails validation.
      try {
        compareValues('', 'regex', c.value);
      } catch (err) {
        report(err, at, ctx);
      }
    }
  }
}

/** Records a DirigentError thrown by compiling a value at `loc`; rethrows anything else. */
function report(err: unknown, loc: SourceLocation, ctx: ValidationContext): void {
  if (!(err instanceof DirigentError)) throw err;
  ctx.diag.error(err.code, err.message, loc, err.hint);
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

function clip(source: string): string {
  return source.length > 60 ? `${source.slice(0, 57)}...` : source;
}
