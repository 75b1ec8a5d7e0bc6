import { didYouMean } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';
import type { Directive, ProcessNode, StepNode } from './ast.js';
import { checkExecute } from './check-execute.js';
import { checkTriggers } from './check-triggers.js';
import { checkCondition, checkTemplate, checkValue, NOWHERE, type Where } from './check-value.js';
import { asWarnings, type Diagnostics } from './diagnostics.js';
import { DEFAULT_CHECKS, type DirectiveChecks } from './directive-checks.js';
import { isProseStep } from './prose-step.js';
import type { ValidationContext } from './validation-context.js';

export { DEFAULT_CHECKS, type DirectiveChecks } from './directive-checks.js';

/**
 * Checks what a directive means rather than how it is written: unique step names, edges to
 * steps that exist (and stay inside their branch), templates and expressions that name known
 * data (inputs, state, steps and their records, answers, loop variables), instruction texts that
 * render, foreach over arrays, and executions its `<permissions>` grant. What needs the project
 * (the tools and child directives a step runs) is checked where the project is known
 * (`engine/project-checks.ts`).
 */
export function validateDirective(
  d: Directive,
  diag: Diagnostics,
  checks: DirectiveChecks = DEFAULT_CHECKS,
): void {
  const names = new Map<string, SourceLocation>();
  const steps = new Map<string, StepNode>();
  const stateKeys = new Set(Object.keys(d.initialState));
  collect(d.process, names, steps, stateKeys, diag);
  const ctx: ValidationContext = {
    d,
    diag,
    names,
    steps,
    stateKeys,
    checkInputs: d.source.format === 'directive' || d.inputs.length > 0,
    checks,
    secrets: new Set(d.secrets),
  };
  checkNodes(d.process, ctx);
  for (const o of d.outputs) if (o.value) checkValue(o.value, o.loc, ctx);
  checkTriggers(d, diag);
}

/** Steps, parallel blocks and branches share one namespace: each has a record in `steps`. */
function claim(
  name: string,
  loc: SourceLocation,
  names: Map<string, SourceLocation>,
  diag: Diagnostics,
): void {
  const first = names.get(name);
  if (first !== undefined) {
    diag.error(
      ErrorCode.DUPLICATE_STEP,
      `The name "${name}" is used twice (first at line ${first.line}).`,
      loc,
      'Give every step, parallel block and branch its own name.',
    );
  } else if (name !== '') names.set(name, loc);
}

function collect(
  nodes: ProcessNode[],
  names: Map<string, SourceLocation>,
  steps: Map<string, StepNode>,
  stateKeys: Set<string>,
  diag: Diagnostics,
): void {
  for (const n of nodes) {
    claim(n.name, n.loc, names, diag);
    if (n.kind === 'step') steps.set(n.name, n);
    for (const a of n.assigns) stateKeys.add(a.name);
    if (n.kind === 'step' && n.action.type === 'foreach' && n.action.collect)
      stateKeys.add(n.action.collect);
    if (n.kind === 'parallel') {
      for (const b of n.branches) {
        claim(b.name, b.loc, names, diag);
        collect(b.nodes, names, steps, stateKeys, diag);
      }
    }
  }
}

function checkNodes(nodes: ProcessNode[], ctx: ValidationContext): void {
  const local = new Set(nodes.map((n) => n.name));
  for (const n of nodes) {
    for (const e of n.next ?? [])
      checkTarget(e.to, e.loc, local, ctx, e.when === undefined ? '<next>' : '<when>');
    if (n.onError !== undefined)
      checkTarget(n.onError, n.onErrorLoc ?? n.loc, local, ctx, 'on_error');
    if (n.condition) checkCondition(n.condition, n.loc, ctx);
    // A step's assigns and edges read its result (and, for an answer it declares, its fields).
    const after: Where = n.kind === 'step' ? { vars: [], step: n } : NOWHERE;
    for (const e of n.next ?? []) if (e.when) checkCondition(e.when, e.loc, ctx, after);
    for (const a of n.assigns) checkValue(a.value, a.loc, ctx, after);
    if (n.kind === 'parallel') {
      for (const b of n.branches) checkNodes(b.nodes, ctx);
      continue;
    }
    for (const g of [n.lock, n.rateLimit]) if (g) checkTemplate(g.key, g.loc, ctx);
    const act = n.action;
    if (act.type === 'execute')
      checkExecute(act.itemType, act.itemId, act.params, act.loc, ctx, NOWHERE);
    else if (act.type === 'foreach') {
      checkValue(act.over, act.loc, ctx);
      if (act.over.kind === 'literal' && !Array.isArray(act.over.value)) {
        ctx.diag.error(
          ErrorCode.FOREACH_NOT_ARRAY,
          `<foreach over="${String(act.over.value)}"> goes over the text "${String(act.over.value)}", which is not an array.`,
          act.loc,
          'Point "over" at an array with a template, e.g. over="${inputs.files}", or build one with expr="…", e.g. expr=\'["a", "b"]\'.',
        );
      }
      const vars = { vars: [act.as, `${act.as}_index`] };
      const ex = act.execute;
      checkExecute(ex.itemType, ex.itemId, ex.params, ex.loc, ctx, vars);
    } else if (act.type === 'render') checkTemplate(act.template, act.loc, ctx);
    else if (act.type === 'instruction') checkInstruction(n, act.text, act.loc, ctx);
    else if (act.type === 'return' && act.output)
      for (const v of Object.values(act.output)) checkValue(v, act.loc, ctx);
    if (n.compensate !== undefined) {
      // It sees the result of the step it undoes (of each item, and the item, for a foreach).
      const vars = act.type === 'foreach' ? [act.as, `${act.as}_index`] : [];
      const ex = n.compensate.execute;
      checkExecute(ex.itemType, ex.itemId, ex.params, ex.loc, ctx, { vars, step: n });
    }
  }
}

/**
 * An instruction's text must render: its templates name known data. A RYE step whose prose
 * became the instruction (it is placed at the step itself) only warns: RYE's prose mentions
 * templates it does not mean, and is shown as written where they do not render.
 */
function checkInstruction(
  step: StepNode,
  text: string,
  loc: SourceLocation,
  ctx: ValidationContext,
): void {
  if (!isProseStep(step)) return checkTemplate(text, loc, ctx);
  checkTemplate(text, loc, {
    ...ctx,
    diag: asWarnings(ctx.diag, "The step's text is shown as written where it does not render."),
  });
}

function checkTarget(
  to: string,
  loc: SourceLocation,
  local: Set<string>,
  ctx: ValidationContext,
  what: string,
): void {
  if (to === '' || to === '$end' || local.has(to)) return; // an empty target is reported by the reader
  const others = [...local].filter((s) => s !== '');
  if (ctx.names.has(to)) {
    ctx.diag.error(
      ErrorCode.NEXT_OUTSIDE_BRANCH,
      `${what} goes to step "${to}", which is not in the same sequence (a <next> inside a branch may not leave it, and one outside may not enter it).`,
      loc,
      `Targets here: ${[...others, '$end'].join(', ')}. To continue after the parallel block, end the branch (or go to $end) and give the <parallel> its own <next>.`,
    );
  } else {
    ctx.diag.error(
      ErrorCode.UNKNOWN_STEP,
      `${what} names step "${to}", which does not exist.${didYouMean(to, others)}`,
      loc,
      `Steps here: ${[...others, '$end'].join(', ')} ($end completes the run).`,
    );
  }
}
