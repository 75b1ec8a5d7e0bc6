/**
 * Reads a RYE state graph (YAML, `tool_type: graph`, reference §2) into the same AST that
 * directives produce, so graphs compile into the same machine and run with the same semantics.
 */
import { noRunSettings } from '../directive/run-settings.js';
import { basename, extname } from 'node:path';
import type * as Yaml from 'yaml';
import { locateYamlKey } from '../directive/yaml-location.js';
import {
  COMPARE_OPS,
  type Action,
  type CompareOp,
  type Condition,
  type Directive,
  type Edge,
  type InputDecl,
  type InputType,
  type ProcessNode,
  type StepNode,
  type ValueSpec,
} from '../directive/ast.js';
import { Diagnostics } from '../directive/diagnostics.js';
import { LineIndex } from '../directive/line-index.js';
import { contentHash } from '../directive/parse-directive.js';
import { emptyLimits } from '../directive/read-metadata.js';
import {
  DEFAULT_CHECKS,
  validateDirective,
  type DirectiveChecks,
} from '../directive/validate-directive.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';
import { hasTemplate } from '../expr/template.js';
import { lazyPackage } from '../lazy-package.js';

/** The YAML reader, loaded by the first YAML graph read. */
const yaml = lazyPackage<typeof Yaml>('yaml');

type Obj = Record<string, unknown>;
const NODE_KEYS = [
  'type',
  'action',
  'next',
  'on_error',
  'assign',
  'over',
  'as',
  'collect',
  'parallel',
  'output',
  'env_requires',
  'cache_result',
  'remote',
];

/** Parses graph YAML; throws `INVALID_GRAPH` (with every problem listed) when it cannot run. */
export function readGraph(
  text: string,
  file: string,
  checks: DirectiveChecks = DEFAULT_CHECKS,
): Directive {
  const lines = new LineIndex(file, text);
  const doc = yaml().parseDocument(text);
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    throw DirigentError.fatal(
      ErrorCode.INVALID_GRAPH,
      `The YAML is not valid: ${e.message.split('\n')[0]}`,
      { location: lines.at(e.pos[0]) },
    );
  }
  const root = doc.toJS() as Obj | null;
  const diag = new Diagnostics();
  const at = (...path: string[]) => locateYamlKey(doc, path, lines);
  if (root === null || typeof root !== 'object' || root.tool_type !== 'graph') {
    throw DirigentError.fatal(
      ErrorCode.INVALID_GRAPH,
      'This YAML file is not a RYE state graph (tool_type: graph).',
      { location: lines.at(0), hint: 'Add "tool_type: graph" and a config with start and nodes.' },
    );
  }
  const config = (root.config ?? {}) as Obj;
  const nodesObj = (config.nodes ?? {}) as Record<string, Obj>;
  const start = String(config.start ?? '');
  if (!(start in nodesObj)) {
    diag.error(
      ErrorCode.INVALID_GRAPH,
      `config.start "${start}" is not one of the graph's nodes.`,
      at('config', 'start'),
      `Nodes: ${Object.keys(nodesObj).join(', ')}.`,
    );
  }
  if (config.on_error === 'continue') {
    diag.warn(
      'GRAPH_ON_ERROR',
      'config.on_error "continue" is not supported; failing nodes without on_error fail the run.',
      at('config', 'on_error'),
    );
  }
  const names = [start, ...Object.keys(nodesObj).filter((n) => n !== start)].filter(
    (n) => n in nodesObj,
  );
  const process: ProcessNode[] = names.map((name) =>
    readNode(name, nodesObj[name]!, at('config', 'nodes', name), diag),
  );
  const schema = (root.config_schema ?? {}) as Obj;
  const directive: Directive = {
    name: basename(file, extname(file)),
    version: String(root.version ?? '1.0.0'),
    title: undefined,
    preamble: '',
    description: typeof root.description === 'string' ? root.description : undefined,
    category: typeof root.category === 'string' ? root.category : undefined,
    author: undefined,
    limits: {
      ...emptyLimits(),
      maxSteps: typeof config.max_steps === 'number' ? config.max_steps : 100,
    },
    permissions: Array.isArray(root.permissions) ? root.permissions.map(String) : undefined,
    inputs: readInputs(schema, at('config_schema')),
    outputs: [],
    returnsState: true,
    process,
    initialState: (config.state ?? {}) as Obj,
    metadata: { executor_id: root.executor_id },
    secrets: [],
    schedules: [],
    events: [],
    runSettings: noRunSettings(),
    valueChecks: [],
    successCriteria: [],
    signature: /^# rye:signed:/.test(text) ? text.split('\n')[0] : undefined,
    source: { file, hash: contentHash(text), format: 'graph' },
    warnings: diag.warnings,
  };
  validateDirective(directive, diag, checks);
  diag.throwIfErrors();
  return directive;
}

function readNode(name: string, n: Obj, loc: SourceLocation, diag: Diagnostics): StepNode {
  for (const key of Object.keys(n))
    if (!NODE_KEYS.includes(key))
      diag.warn('GRAPH_KEY', `Node "${name}" has an unknown key "${key}"; it is ignored.`, loc);
  const type = (n.type as string | undefined) ?? 'action';
  let action: Action;
  if (type === 'return') {
    const output = n.output as Obj | undefined;
    action = {
      type: 'return',
      output: output
        ? Object.fromEntries(Object.entries(output).map(([k, v]) => [k, valueOf(v)]))
        : undefined,
      loc,
    };
  } else if (type === 'gate') {
    action = { type: 'gate', loc };
  } else if (type === 'foreach') {
    const exec = readAction(name, n.action as Obj | undefined, loc, diag);
    if (exec?.type !== 'execute') {
      diag.error(
        ErrorCode.INVALID_GRAPH,
        `foreach node "${name}" needs an action that executes a tool.`,
        loc,
      );
      action = { type: 'gate', loc };
    } else {
      action = {
        type: 'foreach',
        over: valueOf(n.over),
        as: String(n.as ?? 'item'),
        parallel: n.parallel === true ? 16 : 1,
        collect: n.collect === undefined ? undefined : String(n.collect),
        onFailure: 'continue',
        execute: exec,
        loc,
      };
    }
  } else if (type === 'action') {
    action = readAction(name, n.action as Obj | undefined, loc, diag) ?? { type: 'gate', loc };
  } else {
    diag.error(
      ErrorCode.INVALID_GRAPH,
      `Node "${name}" has unknown type "${type}".`,
      loc,
      'Types: return, foreach, gate, or none for an action node.',
    );
    action = { type: 'gate', loc };
  }
  const assigns = Object.entries((n.assign ?? {}) as Obj).map(([key, v]) => ({
    name: key,
    value: valueOf(v),
    loc,
  }));
  return {
    kind: 'step',
    name,
    loc,
    action,
    condition: undefined,
    assigns,
    onError: n.on_error === undefined ? undefined : String(n.on_error),
    // A graph node without `next` ends the run (RYE reports this as "max steps exceeded").
    next: type === 'return' ? [{ when: undefined, to: '$end', loc }] : readNext(n.next, loc),
    retry: undefined,
    timeoutMs: undefined,
    description: undefined,
  };
}

function readAction(
  name: string,
  a: Obj | undefined,
  loc: SourceLocation,
  diag: Diagnostics,
): Action | undefined {
  if (a === undefined) {
    diag.error(
      ErrorCode.INVALID_GRAPH,
      `Node "${name}" has no action.`,
      loc,
      'Give it an action, or type: return / gate.',
    );
    return undefined;
  }
  const primary = String(a.primary ?? 'execute');
  // Later RYE writes item ids as canonical refs, `tool:rye/email/send` or `directive:x/y`.
  const ref = /^(tool|directive|knowledge):(.+)$/.exec(String(a.item_id ?? ''));
  const itemType = ref ? ref[1]! : String(a.item_type ?? 'tool');
  const itemId = ref ? ref[2]! : String(a.item_id ?? '');
  if (primary !== 'execute' || (itemType !== 'tool' && itemType !== 'directive')) {
    diag.warn(
      'GRAPH_ACTION',
      `Node "${name}" does ${primary} ${itemType}, which Dirigent does not run; it becomes an instruction step.`,
      loc,
    );
    return {
      type: 'instruction',
      text: JSON.stringify(a),
      signal: name,
      timeoutMs: undefined,
      loc,
    };
  }
  const params = Object.entries((a.params ?? {}) as Obj).map(([key, v]) => ({
    name: key,
    value: valueOf(v),
    loc,
  }));
  return { type: 'execute', itemType, itemId, params, loc };
}

function readNext(next: unknown, loc: SourceLocation): Edge[] {
  if (next === undefined || next === null) return [{ when: undefined, to: '$end', loc }];
  if (typeof next === 'string') return [{ when: undefined, to: next, loc }];
  return (next as Obj[]).map((e) => ({
    when: e.when === undefined ? undefined : readCondition(e.when as Obj),
    to: String(e.to),
    loc,
  }));
}

function readCondition(c: Obj): Condition {
  if (Array.isArray(c.any)) return { kind: 'any', of: c.any.map((x) => readCondition(x as Obj)) };
  if (Array.isArray(c.all)) return { kind: 'all', of: c.all.map((x) => readCondition(x as Obj)) };
  if (c.not !== undefined) return { kind: 'not', of: readCondition(c.not as Obj) };
  const op = (COMPARE_OPS as readonly string[]).includes(String(c.op ?? 'eq'))
    ? (String(c.op ?? 'eq') as CompareOp)
    : 'eq';
  return { kind: 'compare', path: String(c.path ?? ''), op, value: c.value };
}

function valueOf(v: unknown): ValueSpec {
  if (typeof v === 'string')
    return hasTemplate(v) ? { kind: 'template', source: v } : { kind: 'literal', value: v };
  if (v !== null && typeof v === 'object') return { kind: 'deep', value: v };
  return { kind: 'literal', value: v };
}

function readInputs(schema: Obj, loc: SourceLocation): InputDecl[] {
  const props = (schema.properties ?? {}) as Record<string, Obj>;
  const required = Array.isArray(schema.required) ? schema.required.map(String) : [];
  const types = ['string', 'integer', 'number', 'boolean', 'array', 'object'];
  return Object.entries(props).map(([name, p]) => ({
    name,
    type: (types.includes(String(p.type)) ? p.type : 'string') as InputType,
    required: required.includes(name),
    optional: false,
    default: p.default,
    hasDefault: 'default' in p,
    description: typeof p.description === 'string' ? p.description : undefined,
    loc,
  }));
}
