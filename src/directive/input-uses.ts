/**
 * Where a directive's process reads an input with no way out when it is missing: a template
 * (`${inputs.x}`, `{input:x}`) without `?` and without a default, in a tool's or a child's
 * parameters (a compensation's too), an item id, a render, an explicit `<instruction>`, an
 * assignment, a foreach's list, a lock key or an output. A run without such an input would fail there, after the steps before
 * it ran; so an input that is read so, and has no default, is required at start
 * (`engine/validate-inputs.ts`). Expressions and conditions are not such places: a path they read
 * that is missing is simply nothing (`$exists(inputs.x)` is how one asks). A step whose condition
 * reads the input runs only when it holds, so what it reads is not counted. Pure.
 */
import type { SourceLocation } from '../errors/source-location.js';
import { compileExpression } from '../expr/expression.js';
import { compileTemplate, hasTemplate } from '../expr/template.js';
import type { Condition, Directive, ParamSpec, ProcessNode, ValueSpec } from './ast.js';
import { isProseStep } from './prose-step.js';

/** One place the process reads an input with no fallback. */
export interface InputUse {
  /** The input read. */
  input: string;
  /** The template as written (`{input:customer}`), for messages. */
  raw: string;
  /** Where it is written. */
  loc: SourceLocation;
  /** The step it is read by, or undefined for an output. */
  step: string | undefined;
}

/**
 * The places `d` reads an input that is required at start for it: one it declares neither
 * required (already asked for), nor with a default, nor `required="false"`.
 */
export function requiredAtStart(d: Directive): InputUse[] {
  return inputUses(d).filter((u) => {
    const decl = d.inputs.find((i) => i.name === u.input);
    return decl !== undefined && !decl.required && !decl.hasDefault && !decl.optional;
  });
}

/** The places `d` reads an input with no fallback, in document order (see the module comment). */
export function inputUses(d: Directive): InputUse[] {
  const uses: InputUse[] = [];
  walk(d.process, new Set(), uses);
  for (const o of d.outputs) if (o.value) value(o.value, o.loc, undefined, new Set(), uses);
  return uses;
}

function walk(nodes: readonly ProcessNode[], guarded: Set<string>, uses: InputUse[]): void {
  for (const n of nodes) {
    // A node that runs only when its condition holds may read what the condition tests.
    const inner = n.condition === undefined ? guarded : withTested(guarded, n.condition);
    const at = (v: ValueSpec, loc: SourceLocation) => value(v, loc, n.name, inner, uses);
    for (const a of n.assigns) at(a.value, a.loc);
    if (n.kind === 'parallel') {
      for (const b of n.branches) walk(b.nodes, inner, uses);
      continue;
    }
    for (const g of [n.lock, n.rateLimit]) if (g) at({ kind: 'template', source: g.key }, g.loc);
    const act = n.action;
    const execute = (itemId: string, params: readonly ParamSpec[], loc: SourceLocation) => {
      at({ kind: 'template', source: itemId }, loc);
      for (const p of params) at(p.value, p.loc);
    };
    if (act.type === 'execute') execute(act.itemId, act.params, act.loc);
    else if (act.type === 'foreach') {
      at(act.over, act.loc);
      execute(act.execute.itemId, act.execute.params, act.execute.loc);
    } else if (act.type === 'render') at({ kind: 'template', source: act.template }, act.loc);
    else if (act.type === 'instruction' && !isProseStep(n))
      at({ kind: 'template', source: act.text }, act.loc);
    else if (act.type === 'return' && act.output)
      for (const v of Object.values(act.output)) at(v, act.loc);
    const undo = n.compensate?.execute;
    if (undo !== undefined) execute(undo.itemId, undo.params, undo.loc);
  }
}

/** Notes the inputs `v` reads with no fallback (strings inside a graph's structured value too). */
function value(
  v: ValueSpec,
  loc: SourceLocation,
  step: string | undefined,
  guarded: ReadonlySet<string>,
  uses: InputUse[],
): void {
  if (v.kind === 'template') template(v.source, v.loc ?? loc, step, guarded, uses);
  else if (v.kind === 'deep') deep(v.value, loc, step, guarded, uses);
}

function deep(
  v: unknown,
  loc: SourceLocation,
  step: string | undefined,
  guarded: ReadonlySet<string>,
  uses: InputUse[],
): void {
  if (typeof v === 'string') {
    if (hasTemplate(v)) template(v, loc, step, guarded, uses);
  } else if (Array.isArray(v)) for (const item of v) deep(item, loc, step, guarded, uses);
  else if (v !== null && typeof v === 'object')
    for (const item of Object.values(v)) deep(item, loc, step, guarded, uses);
}

function template(
  source: string,
  loc: SourceLocation,
  step: string | undefined,
  guarded: ReadonlySet<string>,
  uses: InputUse[],
): void {
  let refs;
  try {
    refs = compileTemplate(source).refs;
  } catch {
    return; // reported by validation
  }
  for (const ref of refs) {
    const input = ref.path[0];
    if (ref.root !== 'inputs' || ref.optional || input === undefined || guarded.has(input))
      continue;
    uses.push({ input, raw: ref.raw, loc, step });
  }
}

/** `guarded` and the inputs `c` reads. */
function withTested(guarded: ReadonlySet<string>, c: Condition): Set<string> {
  const out = new Set(guarded);
  const add = (cond: Condition): void => {
    if (cond.kind === 'any' || cond.kind === 'all') cond.of.forEach(add);
    else if (cond.kind === 'not') add(cond.of);
    else if (cond.kind === 'compare') {
      const [root, input] = cond.path.split('.');
      if ((root === 'inputs' || root === 'input') && input !== undefined) out.add(input);
    } else {
      try {
        for (const p of compileExpression(cond.source).reads.paths)
          if (p.root === 'inputs' && p.path[0] !== undefined) out.add(p.path[0]);
      } catch {
        // reported by validation
      }
    }
  };
  add(c);
  return out;
}
