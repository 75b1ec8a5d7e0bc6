/**
 * The order bootstrap tools start in: by priority (higher first), a tool always after the tools
 * it waits for (`wait_for`), ties by item id. A tool whose `wait_for` names a tool that is not a
 * bootstrap tool, a tool on a cycle of `wait_for`, and any tool waiting (at any depth) for one of
 * those are refused, each with an error saying why.
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { BootstrapTool } from './bootstrap-tool.js';

/** What {@link planBootstrap} decided. */
export interface BootstrapPlan {
  /** The tools to start, in order. */
  order: BootstrapTool[];
  /** The tools that will not start, and why. */
  refused: { tool: BootstrapTool; error: DirigentError }[];
}

/** Orders `tools`; see the module comment. */
export function planBootstrap(tools: readonly BootstrapTool[]): BootstrapPlan {
  const byId = new Map(tools.map((t) => [t.itemId, t]));
  const refused = new Map<string, DirigentError>();
  const refuse = (tool: BootstrapTool, message: string, hint: string, details: object) =>
    refused.set(
      tool.itemId,
      DirigentError.fatal(ErrorCode.INVALID_TOOL, `bootstrap tool "${tool.itemId}" ${message}`, {
        location: { file: tool.file, line: 1, column: 1 },
        hint,
        details: { itemId: tool.itemId, ...details },
      }),
    );

  for (const tool of tools) {
    const unknown = tool.spec.waitFor.filter((id) => !byId.has(id));
    if (unknown.length > 0)
      refuse(
        tool,
        `waits for ${list(unknown)}, which ${unknown.length === 1 ? 'is not a bootstrap tool' : 'are not bootstrap tools'}: it will not start.`,
        'wait_for names tools that declare bootstrap enabled with mode once or continuous, by item id.',
        { waitFor: unknown },
      );
  }
  for (const cycle of cycles(tools, byId)) {
    for (const id of cycle) {
      if (refused.has(id)) continue;
      refuse(
        byId.get(id)!,
        `is on a cycle of wait_for (${[...cycle, cycle[0]].join(' → ')}): it will not start.`,
        'Remove one of the wait_for entries of the cycle.',
        { cycle },
      );
    }
  }
  // Whoever waits for a refused tool is refused too, transitively.
  for (let changed = true; changed; ) {
    changed = false;
    for (const tool of tools) {
      if (refused.has(tool.itemId)) continue;
      const blocker = tool.spec.waitFor.find((id) => refused.has(id));
      if (blocker === undefined) continue;
      refuse(
        tool,
        `waits for "${blocker}", which will not start: it will not start either.`,
        refused.get(blocker)!.message,
        { waitFor: [blocker] },
      );
      changed = true;
    }
  }

  // Kahn's algorithm, taking the ready tool of highest priority first.
  const left = tools.filter((t) => !refused.has(t.itemId));
  const done = new Set<string>();
  const order: BootstrapTool[] = [];
  while (left.length > 0) {
    const ready = left.filter((t) => t.spec.waitFor.every((id) => done.has(id)));
    ready.sort((a, b) => b.spec.priority - a.spec.priority || a.itemId.localeCompare(b.itemId));
    const next = ready[0]!; // never empty: cycles and their dependents were refused above
    order.push(next);
    done.add(next.itemId);
    left.splice(left.indexOf(next), 1);
  }
  return {
    order,
    refused: tools
      .filter((t) => refused.has(t.itemId))
      .map((tool) => ({ tool, error: refused.get(tool.itemId)! })),
  };
}

/** The cycles of `wait_for` among known tools, each once, as lists of item ids. */
function cycles(tools: readonly BootstrapTool[], byId: Map<string, BootstrapTool>): string[][] {
  const found: string[][] = [];
  const onCycle = new Set<string>();
  const state = new Map<string, 'visiting' | 'visited'>();
  const stack: string[] = [];
  const visit = (id: string) => {
    state.set(id, 'visiting');
    stack.push(id);
    for (const next of byId.get(id)!.spec.waitFor) {
      if (!byId.has(next)) continue;
      const s = state.get(next);
      if (s === 'visiting') {
        const cycle = stack.slice(stack.indexOf(next));
        if (!cycle.some((c) => onCycle.has(c))) found.push(cycle);
        for (const c of cycle) onCycle.add(c);
      } else if (s === undefined) visit(next);
    }
    stack.pop();
    state.set(id, 'visited');
  };
  for (const t of [...tools].sort((a, b) => a.itemId.localeCompare(b.itemId)))
    if (!state.has(t.itemId)) visit(t.itemId);
  return found;
}

function list(ids: string[]): string {
  return ids.map((id) => `"${id}"`).join(', ');
}
