/**
 * What a JSONata expression reads, found in its parsed form (`jsonata(source).ast()`) by the one
 * walk `expression.ts` makes of every expression it compiles: the paths it reads from the data
 * (`inputs.threshold`, `steps.fetch.result`), and the variables and functions it names that
 * nothing binds (`$sumx(…)`, `$itme`). Validation checks these against what the directive
 * declares; nothing here knows a directive.
 *
 * Only what can be followed is reported. A path is read from the data when it is evaluated where
 * `$` is the whole data: at the top of the expression, in the operands, arguments and blocks
 * around it, and in lambda bodies (a lambda keeps the context it was written in). After the first
 * step of a path, inside a filter (`[…]`), a group (`{…}` after a path), a sort term and the update
 * of a transform, names are relative to what came before and are left alone; `$$` reads the data
 * from anywhere. A path that starts at a variable (`$x.y`) is left alone.
 */

/** A path read from the data: `inputs.threshold` is root `inputs`, path `["threshold"]`. */
export interface ExpressionPath {
  root: string;
  /** The names that follow the root, up to the first step that is not a plain name. */
  path: string[];
  /** The path as written in dots (`inputs.threshold`), for messages. */
  raw: string;
  /** Where JSONata's parser placed its first step (the end of the name), when known. */
  position: number | undefined;
}

/** A variable or function (`$name`) an expression names without binding it. */
export interface ExpressionName {
  name: string;
  /** Called (`$name(…)`) rather than read. */
  called: boolean;
  position: number | undefined;
}

/** What an expression reads (see the module comment). */
export interface ExpressionReads {
  paths: readonly ExpressionPath[];
  /**
   * Variables and functions named but bound neither by the expression (`:=`, lambda parameters,
   * `@$x`, `#$i`) nor by JSONata or Dirigent: the loop variables of a foreach (`$item`) or mistakes.
   */
  unbound: readonly ExpressionName[];
}

/**
 * The functions every expression can call: JSONata's own (1.8), those it binds per evaluation
 * (`$now`, `$millis`), and Dirigent's (`$parse`; `$pad` bounded). `$eval` is refused before this
 * list is asked.
 */
export const EXPRESSION_FUNCTIONS: ReadonlySet<string> = new Set([
  'sum',
  'count',
  'max',
  'min',
  'average',
  'string',
  'substring',
  'substringBefore',
  'substringAfter',
  'lowercase',
  'uppercase',
  'length',
  'trim',
  'pad',
  'match',
  'contains',
  'replace',
  'split',
  'join',
  'formatNumber',
  'formatBase',
  'formatInteger',
  'parseInteger',
  'number',
  'floor',
  'ceil',
  'round',
  'abs',
  'sqrt',
  'power',
  'random',
  'boolean',
  'not',
  'map',
  'zip',
  'filter',
  'single',
  'reduce',
  'sift',
  'keys',
  'lookup',
  'append',
  'exists',
  'spread',
  'merge',
  'reverse',
  'each',
  'error',
  'assert',
  'type',
  'sort',
  'shuffle',
  'distinct',
  'base64encode',
  'base64decode',
  'encodeUrlComponent',
  'encodeUrl',
  'decodeUrlComponent',
  'decodeUrl',
  'toMillis',
  'fromMillis',
  'clone',
  'now',
  'millis',
  'parse',
]);

/** Node keys whose expressions are evaluated once per item of what precedes them. */
const RELATIVE_KEYS: ReadonlySet<string> = new Set([
  'stages',
  'predicate',
  'group',
  'update',
  'delete',
]);
/** Node keys holding a variable a node binds rather than reads. */
const BINDING_KEYS: ReadonlySet<string> = new Set(['focus', 'index']);

/** One node to visit, and whether `$` is the whole data where it is evaluated. */
export interface ReadFrame {
  node: object;
  atRoot: boolean;
}

/**
 * Collects what an expression reads while it is walked: {@link visit} is called with each node
 * the walk takes, and answers the frames of its children.
 */
export class ReadsCollector {
  private readonly paths: ExpressionPath[] = [];
  private readonly named: ExpressionName[] = [];
  private readonly bound = new Set<string>(['', '$']);

  /** Notes what `frame.node` reads and binds; pushes its children's frames onto `stack`. */
  visit(frame: ReadFrame, stack: ReadFrame[]): void {
    const node = frame.node as Record<string, unknown>;
    const { type } = node;
    for (const key of BINDING_KEYS) if (typeof node[key] === 'string') this.bound.add(node[key]);
    if (type === 'path' && Array.isArray(node.steps)) return this.path(node, frame.atRoot, stack);
    if (type === 'variable' && typeof node.value === 'string') {
      this.named.push({ name: node.value, called: false, position: positionOf(node) });
    } else if ((type === 'function' || type === 'partial') && isVariable(node.procedure)) {
      const p = node.procedure;
      this.named.push({ name: p.value, called: true, position: positionOf(p) });
      pushAll(node.arguments, frame.atRoot, stack);
      return this.rest(node, frame.atRoot, stack, ['procedure', 'arguments']);
    } else if (type === 'bind' && isVariable(node.lhs)) {
      this.bound.add(node.lhs.value);
      return this.rest(node, frame.atRoot, stack, ['lhs']);
    } else if (type === 'lambda') {
      if (Array.isArray(node.arguments))
        for (const a of node.arguments) if (isVariable(a)) this.bound.add(a.value);
      return this.rest(node, frame.atRoot, stack, ['arguments']);
    }
    this.rest(node, SAME_CONTEXT.has(type as string) && frame.atRoot, stack, []);
  }

  /** Whether the expression names `$name` anywhere, read, called or bound. */
  mentions(name: string): boolean {
    return (name !== '' && this.bound.has(name)) || this.named.some((n) => n.name === name);
  }

  /** What was collected, once the walk is over. */
  result(): ExpressionReads {
    const unbound = this.named.filter(
      (n) => !this.bound.has(n.name) && !EXPRESSION_FUNCTIONS.has(n.name),
    );
    return { paths: this.paths, unbound };
  }

  /** A path: its first step is evaluated where the path is, the others relative to it. */
  private path(node: Record<string, unknown>, atRoot: boolean, stack: ReadFrame[]): void {
    const steps = node.steps as unknown[];
    const [first, second] = steps;
    let from = -1; // the index of the step that names the root, when the path reads the data
    if (isName(first) && atRoot) from = 0;
    else if (isVariable(first) && (first.value === '$' || (first.value === '' && atRoot)))
      from = isName(second) ? 1 : -1;
    if (from >= 0) this.rootPath(steps, from);
    steps.forEach((step, i) => {
      if (step === null || typeof step !== 'object') return;
      // A first step that is a name was noted above; its filters are relative to it.
      stack.push({ node: step, atRoot: i === 0 && atRoot && !isName(step) });
    });
    this.rest(node, false, stack, ['steps']);
  }

  private rootPath(steps: readonly unknown[], from: number): void {
    const first = steps[from] as { value: string; position?: unknown };
    const path: string[] = [];
    for (let i = from + 1; i < steps.length; i++) {
      const step = steps[i];
      if (!isName(step)) break;
      path.push(step.value);
      if (hasRelative(step)) break; // `items[0].name`: what follows a filter is not a key of it
    }
    const raw = [first.value, ...path].join('.');
    this.paths.push({ root: first.value, path, raw, position: positionOf(first) });
    // A filter on the root itself (`inputs[…]`) is relative to it: the walk of the steps sees it.
  }

  /** Pushes the children of `node` under every key but `skip`. */
  private rest(
    node: Record<string, unknown>,
    atRoot: boolean,
    stack: ReadFrame[],
    skip: readonly string[],
  ): void {
    for (const key in node) {
      if (skip.includes(key)) continue;
      const child = node[key];
      if (child === null || typeof child !== 'object' || child instanceof RegExp) continue;
      pushAll(child, atRoot && !RELATIVE_KEYS.has(key), stack);
    }
  }
}

/** Node types whose operands are evaluated where the node is (every other keeps nothing at the root). */
const SAME_CONTEXT: ReadonlySet<string> = new Set([
  'binary',
  'unary',
  'condition',
  'apply',
  'block',
  'bind',
  'lambda',
  'function',
  'partial',
  'transform',
  'variable',
]);

/** Pushes `child` (a node, or arrays of nodes, as object constructors hold pairs) onto `stack`. */
function pushAll(child: unknown, atRoot: boolean, stack: ReadFrame[]): void {
  if (child === null || typeof child !== 'object' || child instanceof RegExp) return;
  if (Array.isArray(child)) for (const c of child) pushAll(c, atRoot, stack);
  else stack.push({ node: child, atRoot });
}

function isName(node: unknown): node is { type: 'name'; value: string } {
  return (
    node !== null &&
    typeof node === 'object' &&
    (node as { type?: unknown }).type === 'name' &&
    typeof (node as { value?: unknown }).value === 'string'
  );
}

function isVariable(node: unknown): node is { type: 'variable'; value: string } {
  return (
    node !== null &&
    typeof node === 'object' &&
    (node as { type?: unknown }).type === 'variable' &&
    typeof (node as { value?: unknown }).value === 'string'
  );
}

function hasRelative(node: object): boolean {
  for (const key of RELATIVE_KEYS)
    if ((node as Record<string, unknown>)[key] !== undefined) return true;
  return false;
}

function positionOf(node: object): number | undefined {
  const p = (node as { position?: unknown }).position;
  return typeof p === 'number' ? p : undefined;
}
