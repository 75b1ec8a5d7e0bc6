import { coerceValue } from './coerce-value.js';
import { closest, didYouMean } from '../errors/did-you-mean.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';
import { compareValues } from '../expr/compare.js';
import { compileExpression } from '../expr/expression.js';
import { CLOCK_ROOTS } from '../expr/scope.js';
import { compileTemplate, type TemplateSlot } from '../expr/template.js';
import type { Condition, Directive, ProcessNode, ValueSpec } from './ast.js';
import { isGranted, requiredCapability } from './capabilities.js';
import type { Diagnostics } from './diagnostics.js';
import { checkCodeValues } from './check-code-values.js';
import { declaredSyntax, type Syntax } from '../syntax/syntax.js';
import { ALWAYS_ALLOWED_ENV } from '../policy/project-policy.js';

/** What a project asks of its directives beyond their own consistency (see `policy/`). */
export interface DirectiveChecks {
  /** Environment variables `{env:…}` may read besides the directive's `<secrets>`. */
  envAllow: ReadonlySet<string>;
  /** Values that become code are errors rather than warnings. */
  strict: boolean;
  /** The language of a tool's parameter (a shell command, a URL), if the tool declares one. */
  syntaxOf(itemId: string, param: string): Syntax | undefined;
}

/** Checks for a project without configuration: RYE's folder variables only, not strict. */
export const DEFAULT_CHECKS: DirectiveChecks = {
  envAllow: new Set(ALWAYS_ALLOWED_ENV),
  strict: false,
  syntaxOf: (itemId, param) => declaredSyntax(itemId, undefined, param),
};

const FIXED_ROOTS = ['inputs', 'state', 'steps', 'result', 'error', 'env', 'input', ...CLOCK_ROOTS];

/**
 * Checks what a directive means rather than how it is written: unique step names, edges to
 * steps that exist (and stay inside their branch), templates and expressions that name known
 * data, foreach over arrays, and executions its `<permissions>` grant.
 */
export function validateDirective(
  d: Directive,
  diag: Diagnostics,
  checks: DirectiveChecks = DEFAULT_CHECKS,
): void {
  const names = new Map<string, SourceLocation>();
  const stateKeys = new Set(Object.keys(d.initialState));
  collect(d.process, names, stateKeys, diag);
  const ctx: Ctx = {
    d,
    diag,
    names,
    stateKeys,
    checkInputs: d.source.format === 'directive' || d.inputs.length > 0,
    checks,
    secrets: new Set(d.secrets),
  };
  checkNodes(d.process, ctx);
  for (const o of d.outputs) if (o.value) checkValue(o.value, o.loc, ctx, []);
  checkTriggers(d, diag);
}

/**
 * A schedule's inputs must be the directive's, of their types, and complete (a scheduled run has
 * no one to ask); a directive that runs on events takes the payload as its input `event`.
 */
function checkTriggers(d: Directive, diag: Diagnostics): void {
  const byName = new Map(d.inputs.map((i) => [i.name, i]));
  const names = new Set<string>();
  for (const s of d.schedules) {
    if (names.has(s.name))
      diag.error(
        ErrorCode.INVALID_ATTRIBUTE,
        `Two <schedule>s are named "${s.name}".`,
        s.loc,
        'Give each schedule of a directive its own name="…".',
      );
    names.add(s.name);
    for (const [name, raw] of Object.entries(s.inputs)) {
      const decl = byName.get(name);
      if (decl === undefined)
        diag.error(
          ErrorCode.INVALID_INPUTS,
          `<schedule> gives input "${name}", which the directive does not declare.${didYouMean(name, [...byName.keys()])}`,
          s.loc,
          `Declared inputs: ${[...byName.keys()].join(', ') || 'none'}.`,
        );
      else if (!coerceValue(raw, decl.type).ok)
        diag.error(
          ErrorCode.INVALID_INPUTS,
          `<schedule> gives input "${name}" the value "${raw}", which is not ${decl.type === 'integer' || decl.type === 'array' || decl.type === 'object' ? 'an' : 'a'} ${decl.type}.`,
          s.loc,
          "Write a value of the input's type (JSON for arrays and objects).",
        );
    }
    for (const i of d.inputs)
      if (i.required && !i.hasDefault && !(i.name in s.inputs))
        diag.error(
          ErrorCode.INVALID_INPUTS,
          `<schedule> does not give required input "${i.name}", and a scheduled run has no one to ask.`,
          s.loc,
          `Add <input name="${i.name}">…</input> to the schedule, or give the input a default.`,
        );
  }
  if (d.events.length > 0 && byName.get('event')?.type !== 'object')
    diag.error(
      ErrorCode.INVALID_INPUTS,
      `A directive that runs on events (<on event="${d.events[0]!.event}">) takes the event's payload as its input "event", which it does not declare as an object.`,
      d.events[0]!.loc,
      'Declare <input name="event" type="object">the event\'s payload</input>.',
    );
}

interface Ctx {
  d: Directive;
  diag: Diagnostics;
  names: Map<string, SourceLocation>;
  stateKeys: Set<string>;
  checkInputs: boolean;
  checks: DirectiveChecks;
  secrets: ReadonlySet<string>;
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
  stateKeys: Set<string>,
  diag: Diagnostics,
): void {
  for (const n of nodes) {
    claim(n.name, n.loc, names, diag);
    for (const a of n.assigns) stateKeys.add(a.name);
    if (n.kind === 'step' && n.action.type === 'foreach' && n.action.collect)
      stateKeys.add(n.action.collect);
    if (n.kind === 'parallel') {
      for (const b of n.branches) {
        claim(b.name, b.loc, names, diag);
        collect(b.nodes, names, stateKeys, diag);
      }
    }
  }
}

function checkNodes(nodes: ProcessNode[], ctx: Ctx): void {
  const local = new Set(nodes.map((n) => n.name));
  for (const n of nodes) {
    for (const e of n.next ?? [])
      checkTarget(e.to, e.loc, local, ctx, e.when === undefined ? '<next>' : '<when>');
    if (n.onError !== undefined)
      checkTarget(n.onError, n.onErrorLoc ?? n.loc, local, ctx, 'on_error');
    if (n.condition) checkCondition(n.condition, n.loc, ctx, []);
    for (const e of n.next ?? []) if (e.when) checkCondition(e.when, e.loc, ctx, []);
    for (const a of n.assigns) checkValue(a.value, a.loc, ctx, []);
    if (n.kind === 'parallel') {
      for (const b of n.branches) checkNodes(b.nodes, ctx);
      continue;
    }
    for (const g of [n.lock, n.rateLimit])
      if (g) checkValue({ kind: 'template', source: g.key }, g.loc, ctx, []);
    const act = n.action;
    if (act.type === 'execute')
      checkExecute(act.itemType, act.itemId, act.params, act.loc, ctx, []);
    else if (act.type === 'foreach') {
      checkValue(act.over, act.loc, ctx, []);
      if (act.over.kind === 'literal' && !Array.isArray(act.over.value)) {
        ctx.diag.error(
          ErrorCode.FOREACH_NOT_ARRAY,
          `<foreach over="${String(act.over.value)}"> goes over the text "${String(act.over.value)}", which is not an array.`,
          act.loc,
          'Point "over" at an array with a template, e.g. over="${inputs.files}", or build one with expr="…", e.g. expr=\'["a", "b"]\'.',
        );
      }
      const vars = [act.as, `${act.as}_index`];
      checkExecute(
        act.execute.itemType,
        act.execute.itemId,
        act.execute.params,
        act.execute.loc,
        ctx,
        vars,
      );
    } else if (act.type === 'render')
      checkValue({ kind: 'template', source: act.template }, act.loc, ctx, []);
    else if (act.type === 'return' && act.output)
      for (const v of Object.values(act.output)) checkValue(v, act.loc, ctx, []);
  }
}

function checkTarget(
  to: string,
  loc: SourceLocation,
  local: Set<string>,
  ctx: Ctx,
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

function checkExecute(
  itemType: 'tool' | 'directive',
  itemId: string,
  params: { name: string; value: ValueSpec; loc: SourceLocation }[],
  loc: SourceLocation,
  ctx: Ctx,
  vars: string[],
): void {
  checkValue({ kind: 'template', source: itemId }, loc, ctx, vars);
  for (const p of params) checkValue(p.value, p.loc, ctx, vars);
  const literal = !itemId.includes('{');
  const report = { diag: ctx.diag, strict: ctx.checks.strict };
  if (!literal && slotsOf(itemId)?.some((slot) => slot.envName === undefined)) {
    const message = `The ${itemType} this step runs is chosen by a value ("${itemId}"): whoever supplies it chooses what runs`;
    const hint = `Name the ${itemType} in the directive and choose among a few with <when> conditions.`;
    if (ctx.checks.strict)
      ctx.diag.error(
        ErrorCode.VALUE_AS_CODE,
        `${message} (refused: the project is in strict mode).`,
        loc,
        hint,
      );
    else ctx.diag.warn(ErrorCode.VALUE_AS_CODE, `${message}.`, loc, hint);
  }
  if (literal && itemType === 'tool') {
    for (const p of params) {
      if (p.value.kind !== 'template' && p.value.kind !== 'deep') continue;
      if (p.value.kind === 'deep' && typeof p.value.value !== 'string') continue;
      const source = p.value.kind === 'template' ? p.value.source : (p.value.value as string);
      checkCodeValues(itemId, p.name, source, ctx.checks.syntaxOf(itemId, p.name), p.loc, report);
    }
  }
  // A warning, not an error: the step may never run (a condition may skip it), and RYE's own test
  // directives exist to be denied. Running the step fails with PERMISSION_DENIED.
  if (
    literal &&
    ctx.d.permissions !== undefined &&
    !isGranted(ctx.d.permissions, requiredCapability(itemType, itemId))
  ) {
    ctx.diag.warn(
      ErrorCode.PERMISSION_DENIED,
      `The directive's <permissions> do not grant executing ${itemType} "${itemId}" (needs ${requiredCapability(itemType, itemId)}); this step will fail when it runs.`,
      loc,
      `Add <execute><${itemType}>${itemId.replaceAll('/', '.')}</${itemType}></execute> to <permissions>, or a wildcard that covers it.`,
    );
  }
}

/** The slots of a template, or undefined when it does not compile (reported by {@link checkValue}). */
function slotsOf(source: string): readonly TemplateSlot[] | undefined {
  try {
    return compileTemplate(source).slots;
  } catch {
    return undefined;
  }
}

function checkValue(v: ValueSpec, loc: SourceLocation, ctx: Ctx, vars: string[]): void {
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

function checkCondition(c: Condition, loc: SourceLocation, ctx: Ctx, vars: string[]): void {
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
function checkEnv(name: string, raw: string, loc: SourceLocation, ctx: Ctx): void {
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
  ctx: Ctx,
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
