/**
 * A compiled directive as a graph to draw: one node per step, a fork and a join per parallel
 * block (its branches are clusters between them), a start and an end, and the edges the machine
 * can take (document order, `<next>` routes with their conditions, `on_error`). A step that
 * declares `<compensate>` has a node beside it for its compensation (`compensate:NAME`), joined
 * by an `undo` edge: it runs only when the run fails or is cancelled after the step completed.
 * Pure: the console lays it out and colours each node by the state of the step it stands for.
 */
import type { Action, ExecuteAction, ProcessNode } from '../directive/ast.js';
import { compensationName } from '../directive/process-node.js';
import type { CompiledDirective } from '../compiler/compiled-directive.js';
import { condition } from '../compiler/to-mermaid.js';

/** One node of a {@link DirectiveGraph}. */
export interface GraphNode {
  /**
   * Unique in the graph: `start`, `end`, `s:<step>`, `c:<step>` (the step's compensation),
   * `fork:<block>`, `join:<block>`.
   */
  id: string;
  kind: 'start' | 'end' | 'step' | 'compensate' | 'fork' | 'join';
  /** The step (or parallel block, or compensation: `compensate:<step>`) whose state the node shows. */
  step?: string;
  label: string;
  /** What the step does: `tool dirigent/shell/bash`, `instruction`, `foreach item → tool x`. */
  detail?: string;
  action?: Action['type'];
  /** The cluster the node is drawn in (`b:<branch>` or `p:<block>`). */
  cluster?: string;
  /** Where the step is written in the directive (1-based). */
  line?: number;
}

/** A box around nodes: a parallel block, or one of its branches. */
export interface GraphCluster {
  /** `p:<block>` or `b:<branch>`. */
  id: string;
  kind: 'parallel' | 'branch';
  label: string;
  /** The branch or block around this one, if any. */
  cluster?: string;
  /** The branch (or block) whose state the box shows. */
  step: string;
}

/**
 * One edge: `next` (document order or an unconditional `<next>`), `when` (a condition), `error`
 * (`on_error`), `compensate` (from a step to its compensation).
 */
export interface GraphEdge {
  from: string;
  to: string;
  kind: 'next' | 'when' | 'otherwise' | 'error' | 'compensate';
  label?: string;
}

/** See the module comment. */
export interface DirectiveGraph {
  nodes: GraphNode[];
  clusters: GraphCluster[];
  edges: GraphEdge[];
}

/** The graph of `compiled` (see the module comment). */
export function directiveGraph(compiled: CompiledDirective): DirectiveGraph {
  const graph: DirectiveGraph = {
    nodes: [
      { id: 'start', kind: 'start', label: 'start' },
      { id: 'end', kind: 'end', label: 'end' },
    ],
    clusters: [],
    edges: [],
  };
  const entryOf = (name: string): string =>
    compiled.nodes.get(name)?.node.kind === 'parallel' ? `fork:${name}` : `s:${name}`;
  const first = compiled.directive.process[0];
  graph.edges.push({ from: 'start', to: first ? entryOf(first.name) : 'end', kind: 'next' });
  declare(graph, compiled.directive.process, undefined, entryOf);

  for (const cn of compiled.nodes.values()) {
    const from = cn.node.kind === 'parallel' ? `join:${cn.name}` : `s:${cn.name}`;
    const scopeEnd = cn.parallel === null ? 'end' : `join:${cn.parallel}`;
    const conditional = cn.routes.length > 1;
    for (const r of cn.routes) {
      const to = r.to === '$end' ? scopeEnd : entryOf(r.to);
      if (r.when !== undefined)
        graph.edges.push({ from, to, kind: 'when', label: condition(r.when) });
      else graph.edges.push({ from, to, kind: conditional ? 'otherwise' : 'next' });
    }
    if (cn.node.onError !== undefined)
      graph.edges.push({ from, to: entryOf(cn.node.onError), kind: 'error', label: 'on_error' });
  }
  return graph;
}

/** Adds the nodes and clusters of `nodes` (drawn in `cluster`), and each block's inner edges. */
function declare(
  graph: DirectiveGraph,
  nodes: ProcessNode[],
  cluster: string | undefined,
  entryOf: (name: string) => string,
): void {
  const inside = cluster === undefined ? {} : { cluster };
  for (const n of nodes) {
    const line = n.loc.line;
    if (n.kind === 'step') {
      graph.nodes.push({
        id: `s:${n.name}`,
        kind: 'step',
        step: n.name,
        label: n.name,
        detail: describe(n.action),
        action: n.action.type,
        line,
        ...inside,
      });
      if (n.compensate !== undefined) {
        const name = compensationName(n.name);
        graph.nodes.push({
          id: `c:${n.name}`,
          kind: 'compensate',
          step: name,
          label: name,
          // A foreach step is undone item by item: drawn as a stack, as the step is.
          detail: `${n.action.type === 'foreach' ? `each ${n.action.as} → ` : ''}${describe(n.compensate.execute)}`,
          action: n.action.type === 'foreach' ? 'foreach' : 'execute',
          line: n.compensate.loc.line,
          ...inside,
        });
        graph.edges.push({
          from: `s:${n.name}`,
          to: `c:${n.name}`,
          kind: 'compensate',
          label: 'undo',
        });
      }
      continue;
    }
    const block = `p:${n.name}`;
    graph.clusters.push({
      id: block,
      kind: 'parallel',
      label: `${n.name} (parallel, ${n.onFailure})`,
      step: n.name,
      ...inside,
    });
    const fork = `fork:${n.name}`;
    const join = `join:${n.name}`;
    graph.nodes.push(
      { id: fork, kind: 'fork', step: n.name, label: n.name, line, cluster: block },
      { id: join, kind: 'join', step: n.name, label: 'join', line, cluster: block },
    );
    for (const b of n.branches) {
      const id = `b:${b.name}`;
      graph.clusters.push({ id, kind: 'branch', label: b.name, step: b.name, cluster: block });
      const head = b.nodes[0];
      graph.edges.push({ from: fork, to: head ? entryOf(head.name) : join, kind: 'next' });
      declare(graph, b.nodes, id, entryOf);
    }
  }
}

/** What a step's action (or a compensation's `<execute>`) does, in a few words. */
function describe(a: Action | ExecuteAction): string {
  switch (a.type) {
    case 'execute':
      return `${a.itemType} ${a.itemId}`;
    case 'foreach':
      return `foreach ${a.as}${a.parallel > 1 ? ` ×${a.parallel}` : ''} → ${a.execute.itemType} ${a.execute.itemId}`;
    case 'wait':
      return `wait for ${a.signal}`;
    default:
      return a.type;
  }
}
