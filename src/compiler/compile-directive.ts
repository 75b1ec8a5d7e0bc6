/**
 * Compiles a directive's AST into an xstate machine config. Pure: same AST in, same machine out.
 *
 * Shape: `main` holds one state per node (`id: "s:NAME"`): entering it runs `startStep`, leaving
 * it runs `stopStep`. Parallel blocks hold one region per branch, then settle. The engine settles
 * each step (result, assignments, chosen route) and sends `done:NAME` with the route's index, or
 * `fail:NAME`, which goes to `on_error` or fails the enclosing block or the run.
 *
 * A directive whose steps declare `<compensate>` gets a `compensating` state besides: a run that
 * fails or is cancelled after such a step completed goes there instead of ending, and the engine,
 * told by its `compensate` entry, runs the compensations and sends `compensated`; the run then
 * ends `failed` or `cancelled` (or `failed` when a compensation failed for good). Each such step
 * notes its completion in the context (`recordUndo`), so what to undo is stored with the snapshot.
 * Other directives' machines are as they were: compensation costs nothing where none is declared.
 *
 * The machine routes; it does not time. Retries with backoff, step and wait timeouts and the run
 * timeout belong to whoever runs the work (the engine in process, BullMQ attempts and delayed jobs
 * on a queue), which reports the final outcome as one event. That keeps one state and at most two
 * context updates per step, and a snapshot that never holds a timer.
 */
import type { Directive, ParallelNode, ProcessNode, StepNode } from '../directive/ast.js';
import type { CompiledDirective, CompiledNode, Route } from './compiled-directive.js';
import { runMachineSetup, type RunMachineConfig } from './machine-logic.js';
import type { RunContext, RunInput } from './run-context.js';

type Action = { type: string; params?: Record<string, unknown> };
interface Transition {
  target: string;
  actions: Action[];
  guard?: { type: string; params: Record<string, unknown> };
  reenter?: boolean;
}
type StateConfig = Record<string, unknown>;

/** Where a node's failure goes when it has no `on_error`: the first transition whose guard holds. */
type FailSink = (node: string) => Transition | Transition[];

interface Seq {
  endId: string;
  sink: FailSink;
  parallel: string | null;
}

/** Compiles `directive` (see the module comment). */
export function compileDirective(directive: Directive): CompiledDirective {
  const nodes = new Map<string, CompiledNode>();
  const undoable = declaresCompensation(directive.process);
  const topSink: FailSink = (node) =>
    undoing(undoable, 'failed', [{ type: 'setRunError', params: { node } }], '#run.');
  const states = compileSequence(
    directive.process,
    { endId: 'end:', sink: topSink, parallel: null },
    nodes,
  );
  const first = directive.process[0];
  const config = {
    id: 'run',
    initial: 'main',
    context: ({ input }: { input: RunInput }): RunContext => ({
      inputs: input.inputs,
      state: { ...directive.initialState, ...input.state },
      error: null,
      runError: null,
      returned: null,
    }),
    states: {
      main: {
        initial: first ? first.name : '__end',
        states: { ...states, __end: { id: 'end:', type: 'final' } },
        onDone: 'completed',
        on: {
          'run.cancel': undoing(undoable, 'cancelled', [{ type: 'cancelRun' }]),
          'run.fail': undoing(undoable, 'failed', [{ type: 'failRun' }]),
        },
      },
      ...(undoable && { compensating: COMPENSATING }),
      completed: { type: 'final' },
      failed: { type: 'final' },
      cancelled: { type: 'final' },
    },
  } as unknown as RunMachineConfig;
  return { directive, machine: runMachineSetup.createMachine(config), config, nodes };
}

function compileSequence(
  seq: ProcessNode[],
  ctx: Seq,
  nodes: Map<string, CompiledNode>,
): Record<string, StateConfig> {
  const out: Record<string, StateConfig> = {};
  seq.forEach((node, i) => {
    const after = seq[i + 1];
    const routes: Route[] = (node.next ?? []).map((e) => ({ when: e.when, to: e.to }));
    if (!routes.some((r) => r.when === undefined))
      routes.push({ when: undefined, to: after ? after.name : '$end' });
    const target = (to: string) => (to === '$end' ? `#${ctx.endId}` : `#s:${to}`);
    // `recordDone` writes state, so it is left out where a step assigns nothing.
    const records =
      node.assigns.length > 0 ||
      (node.kind === 'step' &&
        (node.action.type === 'return' ||
          (node.action.type === 'foreach' && node.action.collect !== undefined)));
    const doneActions: Action[] = [
      ...(records ? [{ type: 'recordDone' }] : []),
      ...(node.kind === 'step' && node.compensate !== undefined
        ? [{ type: 'recordUndo', params: { node: node.name } }]
        : []),
      { type: 'stepEnded', params: { node: node.name } },
    ];
    const done = routes.map((r, index) => ({
      ...(routes.length > 1 && { guard: { type: 'edge', params: { index } } }),
      target: target(r.to),
      reenter: true,
      actions: doneActions,
    }));
    nodes.set(node.name, { name: node.name, node, routes, parallel: ctx.parallel });
    out[node.name] =
      node.kind === 'step'
        ? compileStep(node, done, ctx, target)
        : compileParallel(node, done, ctx, target, nodes);
  });
  return out;
}

/** A failed node records its error and goes to its `on_error` step, or to the sink. */
function failure(
  node: string,
  onError: string | undefined,
  ctx: Seq,
  target: (to: string) => string,
): Transition | Transition[] {
  const failed: Action[] = [{ type: 'recordFailed' }, { type: 'stepEnded', params: { node } }];
  if (onError !== undefined) return { target: target(onError), reenter: true, actions: failed };
  const sink = ctx.sink(node);
  if (Array.isArray(sink)) return sink.map((t) => ({ ...t, actions: [...failed, ...t.actions] }));
  return { ...sink, actions: [...failed, ...sink.actions] };
}

/**
 * How the run ends `failed` or `cancelled` (with `actions`): straight to that final state, or, in
 * a directive that declares compensations (`undoable`), through `compensating` while a completed
 * step has one to run. `from` is how a target is written where the transition stands (`#run.`
 * from deep inside `main`; nothing from `main` itself, whose siblings these states are).
 */
function undoing(
  undoable: boolean,
  end: 'failed' | 'cancelled',
  actions: Action[],
  from = '',
): Transition | Transition[] {
  const ends: Transition = { target: from + end, actions };
  if (!undoable) return ends;
  return [
    { guard: { type: 'undoPending', params: {} }, target: `${from}compensating.${end}`, actions },
    ends,
  ];
}

/**
 * Where a failed or cancelled run with steps to undo waits while the engine runs their
 * compensations (told by `compensate`); `compensated` ends it as it was heading, or `failed` when
 * a compensation failed for good. Run events (`run.cancel`, `run.fail`) are not heard here:
 * compensations run to their end.
 */
const COMPENSATING = {
  entry: [{ type: 'compensate' }],
  initial: 'failed',
  states: {
    failed: { on: { compensated: { target: '#run.failed', actions: [{ type: 'compensated' }] } } },
    cancelled: {
      on: {
        compensated: [
          {
            guard: { type: 'compensationFailed', params: {} },
            target: '#run.failed',
            actions: [{ type: 'compensated' }],
          },
          { target: '#run.cancelled' },
        ],
      },
    },
  },
};

/** Whether a step of `nodes` (or of their branches) declares `<compensate>`. */
function declaresCompensation(nodes: ProcessNode[]): boolean {
  return nodes.some((n) =>
    n.kind === 'step'
      ? n.compensate !== undefined
      : n.branches.some((b) => declaresCompensation(b.nodes)),
  );
}

function compileStep(
  step: StepNode,
  done: unknown[],
  ctx: Seq,
  target: (to: string) => string,
): StateConfig {
  const node = step.name;
  return {
    id: `s:${node}`,
    entry: [{ type: 'startStep', params: { node } }],
    exit: [{ type: 'stopStep', params: { node } }],
    on: {
      [`done:${node}`]: done,
      [`fail:${node}`]: failure(node, step.onError, ctx, target),
    },
  };
}

function compileParallel(
  p: ParallelNode,
  done: unknown[],
  ctx: Seq,
  target: (to: string) => string,
  nodes: Map<string, CompiledNode>,
): StateConfig {
  const node = p.name;
  // fail_fast: a branch's failure is the block's, and leaving the block stops the other branches.
  const blockFails: FailSink = () => failure(node, p.onError, ctx, target);
  const regions: Record<string, StateConfig> = {};
  for (const b of p.branches) {
    const sink: FailSink =
      p.onFailure === 'fail_fast' ? blockFails : () => ({ target: `#fail:${b.name}`, actions: [] });
    const states = compileSequence(
      b.nodes,
      { endId: `end:${b.name}`, sink, parallel: node },
      nodes,
    );
    const branchEnded = (status: string) => [
      { type: 'branchEnded', params: { node: b.name, status } },
    ];
    regions[b.name] = {
      initial: b.nodes[0]!.name,
      states: {
        ...states,
        __end: { id: `end:${b.name}`, type: 'final', entry: branchEnded('completed') },
        __failed: { id: `fail:${b.name}`, type: 'final', entry: branchEnded('failed') },
      },
    };
  }
  return {
    id: `s:${node}`,
    entry: [{ type: 'nodeEntered', params: { node } }],
    initial: 'run',
    states: {
      run: { type: 'parallel', states: regions, onDone: 'settle' },
      settle: {
        entry: [{ type: 'startStep', params: { node } }],
        on: { [`done:${node}`]: done, [`fail:${node}`]: failure(node, p.onError, ctx, target) },
      },
    },
  };
}
