import type { Condition, Directive, ProcessNode } from '../directive/ast.js';
import type { RunMachine, RunMachineConfig } from './machine-logic.js';

/** One outgoing route of a node: taken when `when` holds (or always); `to` is a node or `$end`. */
export interface Route {
  when: Condition | undefined;
  to: string;
}

/** What the engine needs to know about one node of a compiled directive. */
export interface CompiledNode {
  name: string;
  node: ProcessNode;
  /**
   * Routes in priority order; the engine picks the first that holds and sends its index in the
   * `done:NAME` event. The last route is always unconditional (document order, or `$end`).
   */
  routes: Route[];
  /** The parallel block this node runs in, if any. */
  parallel: string | null;
}

/** A directive compiled to an xstate machine, plus the node table the engine works from. */
export interface CompiledDirective {
  directive: Directive;
  machine: RunMachine;
  config: RunMachineConfig;
  nodes: Map<string, CompiledNode>;
}
