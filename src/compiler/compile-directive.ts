/**
 * Compiles a directive's AST into an xstate machine config. Pure: same AST in, same machine out.
 *
 * Shape: `main` holds one compound state per node (`id: "s:NAME"`) with substates `run` (the
 * attempt: `startStep` on entry, `stopStep` on exit) and `backoff` (a named delay before a
 * retry). Parallel blocks hold one region per branch. Step timeouts, wait timeouts and the run
 * timeout are not machine timers: they belong to whoever runs the work (the engine in process,
 * the worker on a queue), which aborts it and reports a failure event. The engine settles each
 * step (result, assignments, chosen route) and sends `done:NAME` with the route's index, or
 * `fail:NAME` with an error that retries, goes to `on_error`, or fails the run.
 */
import type { Directive, ParallelNode, ProcessNode, StepNode } from '../directive/ast.js';
import type { CompiledDirective, CompiledNode, Route } from './compiled-directive.js';
import { runMachineSetup, type RunMachineConfig } from './machine-logic.js';
import type { RunContext } from './run-context.js';

type Action = { type: string; params?: Record<string, unknown> };
interface Transition {
  target: string;
  actions: Action[];
  guard?: { type: string; params: Record<string, unknown> };
  reenter?: boolean;
}
type StateConfig = Record<string, unknown>;

/** Where a node's failure goes when it has no `on_error`: returns the transition's tail. */
type FailSink = (node: string) => { target: string; actions: Action[] };

interface Seq {
  endId: string;
  sink: FailSink;
  parallel: string | null;
}

/** Compiles `directive` (see the module comment). */
export function compileDirective(directive: Directive): CompiledDirective {
  const nodes = new Map<string, CompiledNode>();
  const delays: Record<string, (args: { context: RunContext }) => number> = {};
  const topSink: FailSink = (node) => ({
    target: '#run.failed',
    actions: [{ type: 'setRunError', params: { node } }],
  });
  const states = compileSequence(
    directive.process,
    { endId: 'end:', sink: topSink, parallel: null },
    nodes,
    delays,
  );
  const first = directive.process[0];
  const main: StateConfig = {
    initial: first ? first.name : '__end',
    states: { ...states, __end: { id: 'end:', type: 'final' } },
    onDone: 'completed',
    on: {
      'run.cancel': { target: 'cancelled', actions: ['cancelRun'] },
      'run.fail': { target: 'failed', actions: ['failRun'] },
    },
  };
  const config = {
    id: 'run',
    initial: 'main',
    context: ({
      input,
    }: {
      input: { inputs: Record<string, unknown>; state?: Record<string, unknown> };
    }): RunContext => ({
      inputs: input.inputs,
      state: { ...directive.initialState, ...input.state },
      steps: {},
      error: null,
      transitions: 0,
      runError: null,
      returned: null,
    }),
    states: {
      main,
      completed: { type: 'final' },
      failed: { type: 'final' },
      cancelled: { type: 'final' },
    },
  } as unknown as RunMachineConfig;
  const machine = runMachineSetup(delays).createMachine(config);
  return { directive, machine, config, nodes };
}

function compileSequence(
  seq: ProcessNode[],
  ctx: Seq,
  nodes: Map<string, CompiledNode>,
  delays: Record<string, (a: { context: RunContext }) => number>,
): Record<string, StateConfig> {
  const out: Record<string, StateConfig> = {};
  seq.forEach((node, i) => {
    const after = seq[i + 1];
    const routes: Route[] = [...(node.next ?? [])].map((e) => ({ when: e.when, to: e.to }));
    if (!routes.some((r) => r.when === undefined))
      routes.push({ when: undefined, to: after ? after.name : '$end' });
    const target = (to: string) => (to === '$end' ? `#${ctx.endId}` : `#s:${to}`);
    const done = routes.map((r, index) => ({
      ...(routes.length > 1 && { guard: { type: 'edge', params: { index } } }),
      target: target(r.to),
      reenter: true,
      actions: [
        { type: 'recordDone', params: { node: node.name } },
        { type: 'stepEnded', params: { node: node.name } },
      ],
    }));
    nodes.set(node.name, { name: node.name, node, routes, parallel: ctx.parallel });
    out[node.name] =
      node.kind === 'step'
        ? compileStep(node, done, ctx, target, delays)
        : compileParallel(node, done, ctx, target, nodes, delays);
  });
  return out;
}

function failureTransitions(
  node: string,
  onError: string | undefined,
  ctx: Seq,
  target: (to: string) => string,
  policy?: unknown,
): Transition[] {
  const params = { node, ...(policy !== undefined && { policy }) };
  const out: Transition[] = [];
  out.push({
    guard: { type: 'canRetry', params },
    target: 'backoff',
    actions: [
      { type: 'recordRetry', params },
      { type: 'stepRetrying', params: { node } },
    ],
  });
  const failed: Action[] = [
    { type: 'recordFailed', params },
    { type: 'stepEnded', params: { node } },
  ];
  if (onError !== undefined) out.push({ target: target(onError), reenter: true, actions: failed });
  else {
    const sink = ctx.sink(node);
    out.push({ target: sink.target, actions: [...failed, ...sink.actions] });
  }
  return out;
}

function compileStep(
  step: StepNode,
  done: unknown[],
  ctx: Seq,
  target: (to: string) => string,
  delays: Record<string, (a: { context: RunContext }) => number>,
): StateConfig {
  const node = step.name;
  const run: StateConfig = {
    entry: [
      { type: 'beginAttempt', params: { node } },
      { type: 'startStep', params: { node } },
    ],
    exit: [{ type: 'stopStep', params: { node } }],
    on: {
      [`done:${node}`]: done,
      [`fail:${node}`]: failureTransitions(node, step.onError, ctx, target, step.retry),
    },
  };
  const retryDelay = `retry:${node}`;
  delays[retryDelay] = ({ context }) => context.steps[node]?.retryDelayMs ?? 0;
  return {
    id: `s:${node}`,
    entry: [{ type: 'enterNode', params: { node } }],
    initial: 'run',
    states: { run, backoff: { after: { [retryDelay]: 'run' } } },
  };
}

function compileParallel(
  p: ParallelNode,
  done: unknown[],
  ctx: Seq,
  target: (to: string) => string,
  nodes: Map<string, CompiledNode>,
  delays: Record<string, (a: { context: RunContext }) => number>,
): StateConfig {
  const node = p.name;
  const ownFailure: FailSink = () => {
    const params = { node };
    const failed: Action[] = [
      { type: 'recordFailed', params },
      { type: 'stepEnded', params: { node } },
    ];
    if (p.onError !== undefined) return { target: target(p.onError), actions: failed };
    const outer = ctx.sink(node);
    return { target: outer.target, actions: [...failed, ...outer.actions] };
  };
  const regions: Record<string, StateConfig> = {};
  for (const b of p.branches) {
    const sink: FailSink =
      p.onFailure === 'fail_fast' ? ownFailure : () => ({ target: `#fail:${b.name}`, actions: [] });
    const states = compileSequence(
      b.nodes,
      { endId: `end:${b.name}`, sink, parallel: node },
      nodes,
      delays,
    );
    regions[b.name] = {
      initial: b.nodes[0]!.name,
      states: {
        ...states,
        __end: {
          id: `end:${b.name}`,
          type: 'final',
          entry: [{ type: 'recordBranch', params: { node: b.name, status: 'completed' } }],
        },
        __failed: {
          id: `fail:${b.name}`,
          type: 'final',
          entry: [{ type: 'recordBranch', params: { node: b.name, status: 'failed' } }],
        },
      },
    };
  }
  return {
    id: `s:${node}`,
    entry: [
      { type: 'enterNode', params: { node } },
      { type: 'beginAttempt', params: { node } },
    ],
    initial: 'run',
    states: {
      run: { type: 'parallel', states: regions, onDone: 'settle' },
      settle: {
        entry: [{ type: 'startStep', params: { node } }],
        on: {
          [`done:${node}`]: done,
          [`fail:${node}`]: [{ ...ownFailure(node), reenter: true }],
        },
      },
    },
  };
}
