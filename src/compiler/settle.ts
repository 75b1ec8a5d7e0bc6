/**
 * Settling a step, pure: after a step's action returns, evaluate its `<assign>`s in order (each
 * sees the ones before it through `state`) and choose the first route that holds. The engine
 * puts the outcome into the `done:NAME` event, so the machine only records decisions and a
 * replay never re-evaluates anything.
 */
import { evaluateCondition } from '../expr/condition.js';
import type { Scope } from '../expr/scope.js';
import { evaluateValue } from '../expr/value.js';
import type { CompiledNode } from './compiled-directive.js';
import type { RunContext, StepDoneEvent, StepRecord } from './run-context.js';

/** What a run's templates, conditions and expressions read, apart from the machine context. */
export interface RunData {
  steps: Record<string, StepRecord>;
  env: Record<string, string | undefined> | undefined;
}

/** The scope templates see inside a step of a run. */
export function scopeOf(
  context: RunContext,
  data: RunData,
  result?: unknown,
  vars?: Record<string, unknown>,
): Scope {
  return {
    inputs: context.inputs,
    state: context.state,
    steps: data.steps,
    result,
    error: context.error,
    env: data.env,
    vars,
  };
}

/**
 * Builds the `done:NAME` event for `node` with `result`; `extra` are state keys written before
 * the assigns (a foreach's `collect`). Throws what a failing assign or condition throws.
 */
export function settle(
  node: CompiledNode,
  context: RunContext,
  data: RunData,
  result: unknown,
  extra?: Record<string, unknown>,
): StepDoneEvent {
  let assigned: Record<string, unknown> | null = extra ?? null;
  let scope = scopeOf(context, data, result);
  if (assigned !== null) scope = { ...scope, state: { ...context.state, ...assigned } };
  for (const a of node.node.assigns) {
    const value = evaluateValue(a.value, scope);
    assigned = { ...assigned, [a.name]: value };
    scope = { ...scope, state: { ...scope.state, [a.name]: value } };
  }
  return { type: `done:${node.name}`, result, assigned, edge: chooseRoute(node, scope) };
}

/** A step whose condition does not hold: `skipped`, no assigns, routes still apply. */
export function settleSkipped(
  node: CompiledNode,
  context: RunContext,
  data: RunData,
): StepDoneEvent {
  return {
    type: `done:${node.name}`,
    result: null,
    assigned: null,
    edge: chooseRoute(node, scopeOf(context, data, null)),
    skipped: true,
  };
}

function chooseRoute(node: CompiledNode, scope: Scope): number {
  const routes = node.routes;
  for (let i = 0; i < routes.length - 1; i++) {
    const when = routes[i]!.when;
    if (when === undefined || evaluateCondition(when, scope)) return i;
  }
  return routes.length - 1;
}
