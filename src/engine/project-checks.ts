/**
 * What validation proves of a directive against its project, beyond its own text
 * (`directive/validate-directive.ts`): every tool and child directive a step executes resolves in
 * the project's spaces (a did-you-mean otherwise); literal parameters fit the tool's schema (no
 * parameter it does not take, none it requires missing, no literal of the wrong type) or the
 * child's inputs; a parameter that is one template reading a value of a declared type (an input,
 * a field of an answer) does not have a type the tool could never take.
 *
 * Item ids chosen by a value (`item_id="{input:tool}"`) cannot be resolved before the run and are
 * left alone. RYE OS's own tools (`rye/…`) are checked as far as they can be, but what is found
 * in an execution of one is a warning: RYE's directives name tools of RYE's own runtime that a
 * Dirigent project may not hold, and still validate.
 */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { ErrorObject } from 'ajv';
import type {
  Diagnostic,
  Directive,
  ExecuteAction,
  InputType,
  ParamSpec,
  ProcessNode,
  StepNode,
} from '../directive/ast.js';
import { coerceValue } from '../directive/coerce-value.js';
import type { ErrorDiagnostic } from '../directive/diagnostic.js';
import { asWarnings, Diagnostics } from '../directive/diagnostics.js';
import { requiredAtStart } from '../directive/input-uses.js';
import { didYouMean } from '../errors/did-you-mean.js';
import { DirigentError, isDirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { compileTemplate, hasTemplate } from '../expr/template.js';
import { KIND_DIRS, KIND_EXTENSIONS, type ItemKind } from '../items/item-kind.js';
import type { ItemResolver } from '../items/item-resolver.js';
import { readToolItem } from '../items/read-tool-item.js';
import { BUILTIN_TOOLS } from '../tools/builtin/index.js';
import { RYE_ALIAS_TOOLS } from '../tools/rye-alias-tools.js';
import { describeInvalidParams } from '../tools/builtin-dispatcher.js';
import { ToolSchemas } from '../tools/tool-schemas.js';
import { acceptSimpleParams } from '../tools/accept-simple-params.js';
import { declaredSyntax } from '../values/syntax.js';

/** What checking a directive against its project found. */
export interface ProjectFindings {
  errors: ErrorDiagnostic[];
  warnings: Diagnostic[];
}

/** What the checks need of the project. */
export interface ProjectItems {
  readonly projectDir: string;
  readonly items: ItemResolver;
  /**
   * The file of child directive `ref` executed by the directive in `fromFile`; throws
   * `UNKNOWN_DIRECTIVE` or `INVALID_ITEM_ID`.
   */
  resolveDirective(ref: string, fromFile: string): Promise<string>;
  /** The child directive in `file`, parsed (its own located errors thrown). */
  readDirective(file: string): Promise<Directive>;
}

/** A tool as far as the checks know it: found (with its parameter schema when it could be read) or not. */
type ToolInfo = { found: true; schema: Record<string, unknown> | undefined } | { found: false };

const BUILTIN_SCHEMAS = new Map(
  BUILTIN_TOOLS.map((t) => [t.itemId, t.paramsSchema as Record<string, unknown>]),
);
const ALIAS_SCHEMAS = new Map(
  RYE_ALIAS_TOOLS.map((t) => [t.itemId, t.paramsSchema as Record<string, unknown>]),
);
/** Folders never holding items, skipped when item ids are listed for a did-you-mean. */
const SKIPPED_DIRS = new Set(['node_modules', '__pycache__', '.git', '.venv']);
/** The most item ids listed per kind for a did-you-mean. */
const MAX_LISTED = 5000;

const schemas = new ToolSchemas();

/** Checks directive `d`, read from `file`, against `project` (see the module comment). */
export async function checkProject(
  d: Directive,
  file: string,
  project: ProjectItems,
): Promise<ProjectFindings> {
  const diag = new Diagnostics();
  const rye = asWarnings(
    diag,
    'A tool of RYE OS, which RYE runs: a warning here, and the step fails if it runs.',
  );
  const tools = new Map<string, Promise<ToolInfo>>();
  const children = new Map<string, Promise<Directive | DirigentError>>();
  const known = new Map<ItemKind, Promise<string[]>>();
  const listed = (kind: ItemKind) => {
    let ids = known.get(kind);
    if (ids === undefined) known.set(kind, (ids = listItemIds(project, kind)));
    return ids;
  };
  for (const ex of executionsOf(d.process)) {
    if (ex.itemId.includes('{') || ex.itemId === '') continue; // chosen by a value, or reported
    const sink = ex.itemId.startsWith('rye/') ? rye : diag;
    if (ex.itemType === 'tool') {
      let info = tools.get(ex.itemId);
      if (info === undefined) tools.set(ex.itemId, (info = toolInfo(ex.itemId, project)));
      let tool: ToolInfo;
      try {
        tool = await info;
      } catch (err) {
        if (!(err instanceof DirigentError)) throw err;
        sink.error(err.code, err.message, ex.loc, err.hint); // an id that would leave its space
        continue;
      }
      if (!tool.found) unknownTool(ex, await listed('tool'), sink);
      else if (tool.schema !== undefined) checkParams(ex, tool.schema, d, sink);
    } else {
      let child = children.get(ex.itemId);
      if (child === undefined) children.set(ex.itemId, (child = childOf(ex.itemId, file, project)));
      const found = await child;
      if (found instanceof DirigentError) {
        const typo =
          found.code === ErrorCode.UNKNOWN_DIRECTIVE
            ? didYouMean(ex.itemId, await listed('directive'))
            : '';
        sink.error(found.code, found.message + typo, ex.loc, found.hint);
      } else checkChildInputs(ex, found, d, sink);
    }
  }
  return { errors: diag.errors, warnings: diag.warnings };
}

/** Every `<execute>` of `nodes`, a foreach's and a compensation's included. */
function executionsOf(nodes: readonly ProcessNode[], out: ExecuteAction[] = []): ExecuteAction[] {
  for (const n of nodes) {
    if (n.kind === 'parallel') {
      for (const b of n.branches) executionsOf(b.nodes, out);
      continue;
    }
    const act = n.action;
    if (act.type === 'execute') out.push(act);
    else if (act.type === 'foreach') out.push(act.execute);
    if (n.compensate !== undefined) out.push(n.compensate.execute);
  }
  return out;
}

/** The tool `itemId` as the dispatcher would find it: a built-in, a space's, RYE's name of a built-in. */
async function toolInfo(itemId: string, project: ProjectItems): Promise<ToolInfo> {
  const builtin = BUILTIN_SCHEMAS.get(itemId);
  if (builtin !== undefined) return { found: true, schema: builtin };
  try {
    const resolution = await project.items.resolve('tool', itemId);
    // A tool file that cannot be read (no Python here, a syntax error) fails where it runs.
    const item = await readToolItem(resolution, project.projectDir).catch(() => undefined);
    return { found: true, schema: item?.paramsSchema };
  } catch (err) {
    if (!isDirigentError(err, ErrorCode.UNKNOWN_TOOL)) throw err;
  }
  const alias = ALIAS_SCHEMAS.get(itemId);
  return alias === undefined ? { found: false } : { found: true, schema: alias };
}

function unknownTool(ex: ExecuteAction, inSpaces: string[], sink: Diagnostics): void {
  const builtins = [...BUILTIN_SCHEMAS.keys()];
  const candidates = [...builtins, ...ALIAS_SCHEMAS.keys(), ...inSpaces];
  sink.error(
    ErrorCode.UNKNOWN_TOOL,
    `Unknown tool "${ex.itemId}": not a built-in tool, and no space holds it.${didYouMean(ex.itemId, candidates)}`,
    ex.loc,
    `Name a tool of the project's spaces (.ai/tools/) or a built-in one: ${builtins.join(', ')}.`,
  );
}

/** The child directive `ref` of the directive in `file`, parsed, or why it cannot be. */
async function childOf(
  ref: string,
  file: string,
  project: ProjectItems,
): Promise<Directive | DirigentError> {
  let childFile: string;
  try {
    childFile = await project.resolveDirective(ref, file);
  } catch (err) {
    if (err instanceof DirigentError) return err;
    throw err;
  }
  try {
    return await project.readDirective(childFile);
  } catch (err) {
    if (!(err instanceof DirigentError)) throw err;
    const where =
      err.location === undefined
        ? ''
        : ` (${relative(project.projectDir, err.location.file) || err.location.file}:${err.location.line}:${err.location.column})`;
    return DirigentError.fatal(
      err.code,
      `Child directive "${ref}" does not validate${where}: ${err.message}`,
      { hint: `Run dirigent validate ${ref} and fix what it says.` },
    );
  }
}

// ---- parameters

/** The type a parameter written as one template has, when its declaration says (an input, an answer field). */
function declaredTypeOf(p: ParamSpec, d: Directive): InputType | undefined {
  if (p.value.kind !== 'template') return undefined;
  let template;
  try {
    template = compileTemplate(p.value.source);
  } catch {
    return undefined; // reported by validation
  }
  const [ref] = template.refs;
  if (!template.isWhole || template.refs.length !== 1 || ref === undefined) return undefined;
  if (ref.root === 'inputs' && ref.path.length === 1)
    return d.inputs.find((i) => i.name === ref.path[0])?.type;
  const [name, field, key] = ref.path;
  if (ref.root === 'steps' && field === 'result' && name !== undefined) {
    const action = stepNamed(d.process, name)?.action;
    const answer =
      action?.type === 'instruction' || action?.type === 'wait' ? action.answer : undefined;
    if (answer?.kind === 'whole' && key === undefined) return answer.type;
    if (answer?.kind === 'fields' && ref.path.length === 3)
      return answer.fields.find((f) => f.name === key)?.type;
  }
  return undefined;
}

/** The step named `name` among `nodes` and their branches. */
function stepNamed(nodes: readonly ProcessNode[], name: string): StepNode | undefined {
  for (const n of nodes) {
    if (n.kind === 'step' && n.name === name) return n;
    if (n.kind === 'parallel')
      for (const b of n.branches) {
        const found = stepNamed(b.nodes, name);
        if (found !== undefined) return found;
      }
  }
  return undefined;
}

/** Whether a value of declared type `type` can never be taken by a parameter of schema types `want`. */
function neverFits(type: InputType, want: readonly string[]): boolean {
  // ajv coerces between strings, numbers and booleans, never to or from arrays and objects.
  const structured = (t: string) => t === 'array' || t === 'object';
  if (want.includes(type) || (type === 'integer' && want.includes('number'))) return false;
  return structured(type) || want.every(structured);
}

/** Types a property schema allows, when it says (`type: "string"` or `type: ["string", "null"]`). */
function typesOf(property: unknown): string[] | undefined {
  const type = (property as { type?: unknown } | undefined)?.type;
  if (typeof type === 'string') return [type];
  if (Array.isArray(type) && type.every((t) => typeof t === 'string')) return type as string[];
  return undefined;
}

/** A literal param's value: written in the directive, with no template in it. */
function literalOf(p: ParamSpec): { value: unknown } | undefined {
  if (p.value.kind === 'literal') return { value: p.value.value };
  if (p.value.kind === 'deep' && !containsTemplate(p.value.value)) return { value: p.value.value };
  return undefined;
}

function containsTemplate(v: unknown): boolean {
  if (typeof v === 'string') return hasTemplate(v);
  if (Array.isArray(v)) return v.some(containsTemplate);
  if (v !== null && typeof v === 'object') return Object.values(v).some(containsTemplate);
  return false;
}

/** Checks `ex`'s parameters against the tool's parameter `schema`. */
function checkParams(
  ex: ExecuteAction,
  schema: Record<string, unknown>,
  d: Directive,
  sink: Diagnostics,
): void {
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  const names = Object.keys(properties);
  const takes = `Its parameters: ${names.join(', ') || 'none'}.`;
  const byName = new Map(ex.params.map((p) => [p.name, p]));
  if (schema.additionalProperties === false) {
    for (const p of ex.params) {
      if (Object.hasOwn(properties, p.name)) continue;
      sink.error(
        ErrorCode.INVALID_PARAMS,
        `${ex.itemId} takes no parameter "${p.name}".${didYouMean(p.name, names)}`,
        p.loc,
        takes,
      );
    }
  }
  const given: Record<string, unknown> = {};
  let allLiteral = true;
  for (const p of ex.params) {
    const literal = literalOf(p);
    if (literal !== undefined) given[p.name] = structuredClone(literal.value);
    else allLiteral = false;
    const type = declaredTypeOf(p, d);
    const want = typesOf(properties[p.name]);
    if (
      type !== undefined &&
      want !== undefined &&
      declaredSyntax(ex.itemId, schema, p.name) === undefined &&
      neverFits(type, want)
    ) {
      sink.error(
        ErrorCode.INVALID_PARAMS,
        `<param name="${p.name}"> of ${ex.itemId} is given ${article(type)} ${type} (${(p.value as { source: string }).source}), and the parameter takes ${want.join(' or ')}.`,
        p.value.kind === 'template' ? (p.value.loc ?? p.loc) : p.loc,
        `Pass a value of that type, e.g. a field of it, or change the input's type.`,
      );
    }
  }
  // Literals that surely fit a plain schema need no ajv (which a one-step run need not load).
  const required = Array.isArray(schema.required) ? (schema.required as unknown[]) : [];
  const templated = required.filter(
    (r) => typeof r === 'string' && byName.has(r) && !Object.hasOwn(given, r),
  );
  const plain = { ...schema, required: required.filter((r) => !templated.includes(r)) };
  if (acceptSimpleParams(plain, structuredClone(given))) return;
  let validate;
  try {
    validate = schemas.params(schema);
  } catch {
    return; // a schema that does not compile fails the call where it runs
  }
  if (validate(given)) return;
  const whole: ErrorObject[] = []; // about the parameters together (anyOf, …): known when all are literal
  for (const e of validate.errors ?? []) {
    const name = e.instancePath.split('/')[1];
    if (e.keyword === 'additionalProperties') continue; // reported above, templated ones too
    if (e.keyword === 'required' && e.schemaPath === '#/required') {
      const missing = String(e.params.missingProperty);
      if (byName.has(missing)) continue; // given by a template: known when the step runs
      sink.error(
        ErrorCode.INVALID_PARAMS,
        `${ex.itemId} needs the parameter "${missing}", which this <execute> does not give.`,
        ex.loc,
        `Add <param name="${missing}" value="…"/>. ${takes}`,
      );
    } else if (name !== undefined && byName.has(name)) {
      const p = byName.get(name)!;
      if (literalOf(p) === undefined) continue;
      const want = typesOf(properties[name]);
      sink.error(
        ErrorCode.INVALID_PARAMS,
        `<param name="${name}"> of ${ex.itemId}: ${shown(p)} is not a value it takes: ${e.instancePath} ${e.message ?? 'is invalid'}.`,
        p.loc,
        `Write a value the parameter takes${want === undefined ? '' : ` (${want.join(' or ')})`}.`,
      );
    } else if (name === undefined) whole.push(e);
  }
  if (allLiteral && whole.length > 0) {
    const reasons = describeInvalidParams(ex.itemId, whole, schema).message;
    sink.error(ErrorCode.INVALID_PARAMS, `${reasons}.`, ex.loc, takes);
  }
}

/** Checks the parameters of an execution of child directive `child` against its inputs. */
function checkChildInputs(
  ex: ExecuteAction,
  child: Directive,
  d: Directive,
  sink: Diagnostics,
): void {
  const declared = child.inputs.map((i) => i.name);
  const open = child.inputs.length === 0 && child.source.format === 'graph';
  const inputsOf = `The inputs of "${ex.itemId}": ${child.inputs.map((i) => `${i.name} (${i.type}${i.required && !i.hasDefault ? ', required' : ''})`).join(', ') || 'none'}.`;
  const byName = new Map(ex.params.map((p) => [p.name, p]));
  for (const p of ex.params) {
    const decl = child.inputs.find((i) => i.name === p.name);
    if (decl === undefined) {
      if (!open)
        sink.error(
          ErrorCode.INVALID_INPUTS,
          `Child directive "${ex.itemId}" has no input "${p.name}".${didYouMean(p.name, declared)}`,
          p.loc,
          inputsOf,
        );
      continue;
    }
    const literal = literalOf(p);
    if (literal !== undefined && !coerceValue(literal.value, decl.type).ok) {
      sink.error(
        ErrorCode.INVALID_INPUTS,
        `Input "${p.name}" of child directive "${ex.itemId}" is ${article(decl.type)} ${decl.type}; ${shown(p)} is not one.`,
        p.loc,
        inputsOf,
      );
    }
    const type = declaredTypeOf(p, d);
    if (type !== undefined && neverFits(type, [decl.type])) {
      sink.error(
        ErrorCode.INVALID_INPUTS,
        `Input "${p.name}" of child directive "${ex.itemId}" is ${article(decl.type)} ${decl.type}, and is given ${article(type)} ${type}.`,
        p.value.kind === 'template' ? (p.value.loc ?? p.loc) : p.loc,
        inputsOf,
      );
    }
  }
  const needed = new Map<string, string>(); // input → why it is needed
  for (const i of child.inputs) if (i.required && !i.hasDefault) needed.set(i.name, '');
  for (const use of requiredAtStart(child))
    if (!needed.has(use.input)) needed.set(use.input, ` (it reads ${use.raw} with no default)`);
  for (const [name, why] of needed) {
    if (byName.has(name)) continue;
    sink.error(
      ErrorCode.INVALID_INPUTS,
      `Child directive "${ex.itemId}" needs the input "${name}"${why}, which this <execute> does not give.`,
      ex.loc,
      `Add <param name="${name}" value="…"/>. ${inputsOf}`,
    );
  }
}

function shown(p: ParamSpec): string {
  const v = p.value.kind === 'literal' || p.value.kind === 'deep' ? p.value.value : undefined;
  const text = typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v));
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? 'an' : 'a';
}

// ---- item ids for a did-you-mean

/** The ids of the items of `kind` in every space (at most {@link MAX_LISTED}), for a did-you-mean. */
async function listItemIds(project: ProjectItems, kind: ItemKind): Promise<string[]> {
  const ids = new Set<string>();
  for (const space of project.items.spaces) {
    const root = join(space.root, KIND_DIRS[kind]);
    const pending = [root];
    while (pending.length > 0 && ids.size < MAX_LISTED) {
      const dir = pending.pop()!;
      let entries: Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        continue; // a space without this folder
      }
      for (const e of entries) {
        if (e.isDirectory()) {
          if (!SKIPPED_DIRS.has(e.name)) pending.push(join(dir, e.name));
          continue;
        }
        const ext = KIND_EXTENSIONS[kind].find((x) => e.name.endsWith(x));
        if (ext === undefined) continue;
        ids.add(
          relative(root, join(dir, e.name.slice(0, -ext.length)))
            .split('\\')
            .join('/'),
        );
      }
    }
  }
  return [...ids];
}

/** Throws one error carrying every error `findings` hold (see `Diagnostics.throwIfErrors`). */
export function throwIfErrors(findings: ProjectFindings): void {
  const diag = new Diagnostics();
  diag.errors.push(...findings.errors);
  diag.throwIfErrors();
}
