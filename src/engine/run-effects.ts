/**
 * The effects a compiled machine names (`startStep`, `stopStep`, `stepEnded`, `nodeEntered`,
 * `branchEnded`, `compensate`; see `compiler/machine-logic.ts`), provided as calls on the effects
 * of the run whose actor performs them. The compiler only names them: this is where each name
 * meets its method.
 */
import type { RunMachine } from '../compiler/machine-logic.js';
import type { RunContext, RunEvent } from '../compiler/run-context.js';

/** What a run does for each effect its machine names. */
export interface RunEffects {
  /** The machine entered a step (or a parallel block whose branches all ended): start it. */
  startStep(context: RunContext, node: string): void;
  /** The machine left a step: stop whatever still runs for it. */
  stopStep(node: string): void;
  /** A step's outcome event was taken: record it. */
  stepEnded(event: RunEvent, node: string): void;
  /** A parallel block starts. */
  nodeEntered(node: string): void;
  /** A branch of a parallel block reached its end or failed. */
  branchEnded(node: string, status: 'completed' | 'failed'): void;
  /** The run failed or was cancelled with completed steps to undo: run their compensations. */
  compensate(): void;
}

/** A run as the provided machine finds it: by its actor, for its effects. */
export interface EffectfulRun {
  readonly effects: RunEffects;
}

/**
 * `machine` with its effects provided: each calls the effect of the run that `runOf` finds for
 * the acting actor. One provided machine serves every run of a compiled machine (providing it
 * costs more than a run's steps).
 */
export function provideRunEffects(
  machine: RunMachine,
  runOf: (actor: unknown) => EffectfulRun,
): RunMachine {
  type Args = { context: RunContext; event: RunEvent; self: unknown };
  type P = { node: string };
  return machine.provide({
    actions: {
      startStep: ({ context, self }: Args, p: P) => runOf(self).effects.startStep(context, p.node),
      stopStep: ({ self }: Args, p: P) => runOf(self).effects.stopStep(p.node),
      stepEnded: ({ event, self }: Args, p: P) => runOf(self).effects.stepEnded(event, p.node),
      nodeEntered: ({ self }: Args, p: P) => runOf(self).effects.nodeEntered(p.node),
      branchEnded: ({ self }: Args, p: P & { status: 'completed' | 'failed' }) =>
        runOf(self).effects.branchEnded(p.node, p.status),
      compensate: ({ self }: Args) => runOf(self).effects.compensate(),
    } as never,
  }) as RunMachine;
}
