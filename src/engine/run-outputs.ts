import type { Directive } from '../directive/ast.js';
import type { RunContext } from '../compiler/run-context.js';
import { scopeOf, type RunData } from '../compiler/settle.js';
import { evaluateValue } from '../expr/value.js';

/**
 * The declared outputs of a run that completed, evaluated against its final context; a graph
 * (which returns its state) gives its `<return>` output or its whole state.
 */
export function runOutputs(
  d: Directive,
  context: RunContext,
  data: RunData,
): Record<string, unknown> {
  if (d.returnsState) return context.returned ?? { ...context.state };
  const scope = scopeOf(context, data);
  const out: Record<string, unknown> = {};
  for (const o of d.outputs)
    out[o.name] = o.value ? evaluateValue(o.value, scope) : (context.state[o.name] ?? null);
  return out;
}
