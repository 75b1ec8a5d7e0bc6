/** How a run was started: its place in a tree of child directives. */
export interface RunLineage {
  /** 0 for a run started by a trigger, parent + 1 for a child directive. */
  depth: number;
  /** Deepest nesting allowed below the root run. */
  maxDepth: number;
  parentRunId: string | null;
}
