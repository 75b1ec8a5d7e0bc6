/**
 * What a run does for each effect its machine names (`startStep`, `stopStep`, `stepEnded`,
 * `nodeEntered`, `branchEnded`, `compensate`; `run-effects.ts` provides them to the machine),
 * performed on the parts of the run: a step entered is checked against the run's limits and its
 * condition and dispatched ({@link dispatchStep}: a tool call, a child directive, a foreach, a
 * wait…); a step left has its work or its wait stopped; an outcome taken goes into the step book;
 * a run that fails or is cancelled with steps to undo runs their compensations ({@link
 * Compensations}).
 */
import type { Actor } from 'xstate';
import type { CompiledNode } from '../compiler/compiled-directive.js';
import type { RunMachine } from '../compiler/machine-logic.js';
import type { RunContext, RunEvent } from '../compiler/run-context.js';
import { scopeOf, settleSkipped } from '../compiler/settle.js';
import { ErrorCode } from '../errors/error-codes.js';
import { evaluateCondition } from '../expr/condition.js';
import { dispatchStep, type DispatchingRun } from './dispatch-step.js';
import { ENGINE_DEFAULTS } from './engine-options.js';
import type { RunEffects } from './run-effects.js';
import type { RunLifecycle } from './run-lifecycle.js';
import type { RunRecord } from './run-record.js';
import type { StepBook } from './step-book.js';
import type { StepWork } from './step-work.js';
import type { Compensations } from './compensations.js';

/** What the effects act on: the run (an {@link ActiveRun}) and its parts. */
export interface EffectedRun extends DispatchingRun {
  readonly record: RunRecord;
  readonly lifecycle: Pick<RunLifecycle, 'queueIdleCheck' | 'resumeRunning'>;
  readonly book: StepBook;
  readonly work: StepWork;
  /** Child runs started by this run, by the step that started them. */
  readonly children: Record<string, string>;
  readonly compensations: Pick<Compensations, 'begin'>;
  readonly actor: Pick<Actor<RunMachine>, 'getSnapshot'>;
  /** The compiled node of a step or block. */
  node(name: string): CompiledNode;
  /** Sends an event to the machine, while it runs. */
  send(event: RunEvent): void;
}

/** The effects of one run's machine (see the module comment). */
export class MachineEffects implements RunEffects {
  constructor(private readonly run: EffectedRun) {}

  /** `startStep`: run a step (or settle a parallel block whose branches all ended). */
  startStep(context: RunContext, node: string): void {
    const run = this.run;
    const cn = run.node(node);
    const maxSteps = run.directive.limits.maxSteps ?? ENGINE_DEFAULTS.maxSteps;
    if (cn.node.kind === 'step' && ++run.book.counters.transitions > maxSteps) {
      const message = `The run took more than ${maxSteps} steps (<limits max_steps>); is a loop missing its exit?`;
      run.send({
        type: 'run.fail',
        error: { code: ErrorCode.MAX_STEPS_EXCEEDED, message, step: node },
      });
      return;
    }
    if (cn.node.kind === 'parallel') {
      const branches = Object.fromEntries(
        cn.node.branches.map((b) => [b.name, run.steps[b.name]?.status ?? 'completed']),
      );
      run.work.settleStep(cn, context, { branches });
      return;
    }
    if (run.host.isPaused(run.record.directive)) {
      // Held, not begun: the run pauses once the work under way has ended.
      run.book.stepHeld(node);
      run.lifecycle.queueIdleCheck();
      return;
    }
    this.beginStep(context, cn);
  }

  /** Begins a step entered: its condition, then its dispatch (see {@link startStep}). */
  beginStep(context: RunContext, cn: CompiledNode): void {
    const run = this.run;
    const node = cn.name;
    const step = cn.node;
    if (step.kind !== 'step') return;
    const rec = run.book.stepStarted(node);
    try {
      if (step.condition && !evaluateCondition(step.condition, scopeOf(context, run.data))) {
        rec.attempts = 0;
        run.send(settleSkipped(cn, context, run.data));
        return;
      }
      run.host.observer?.stepStarted?.(run.runId, node, 1);
      dispatchStep(run, cn, step, context);
    } catch (err) {
      run.work.failStep(cn, err);
    }
  }

  /**
   * Begins the steps held while the run's directive was paused, now that it is not; true when
   * there were any.
   */
  releaseHolds(): boolean {
    const run = this.run;
    const held = Object.entries(run.steps).filter(([, rec]) => rec.held === true);
    if (held.length === 0 || run.host.isPaused(run.record.directive)) return false;
    run.book.holding = false;
    run.lifecycle.resumeRunning();
    const context = run.actor.getSnapshot().context;
    for (const [node] of held) {
      const cn = run.loaded.compiled.nodes.get(node);
      if (cn !== undefined) this.beginStep(context, cn);
    }
    return true;
  }

  /** `stopStep`: the machine left the step; stop whatever still runs or waits for it. */
  stopStep(node: string): void {
    const waited = this.run.waiting.dropStep(node);
    const worked = this.run.work.stop(node);
    if (waited || worked) this.run.book.stepStopped(node);
  }

  /** `stepEnded`: the step's outcome event was taken. */
  stepEnded(event: RunEvent, node: string): void {
    this.run.book.stepEnded(event, node);
  }

  /** `nodeEntered`: a parallel block starts. */
  nodeEntered(node: string): void {
    this.run.book.nodeEntered(node);
  }

  /** `branchEnded`: a branch of a parallel block reached its end or failed. */
  branchEnded(node: string, status: 'completed' | 'failed'): void {
    this.run.book.branchEnded(node, status);
  }

  /** `compensate`: the run failed or was cancelled with completed steps to undo. */
  compensate(): void {
    this.run.compensations.begin();
  }

  /**
   * Dispatches again the steps a resumed run had under way when its last process stopped (their
   * records say `running`): the machine is still in their states, only the work was lost. A tool
   * job that finished meanwhile is not run twice: the queue answers its deterministic job id.
   */
  restartInterrupted(): void {
    const run = this.run;
    const context = run.actor.getSnapshot().context;
    const waits = new Set((run.record.waiting ?? []).map((w) => w.step));
    for (const [node, rec] of Object.entries(run.steps)) {
      const cn = run.loaded.compiled.nodes.get(node);
      if (rec.status !== 'running' || cn?.node.kind !== 'step' || waits.has(node)) continue;
      if (rec.held === true) continue; // begins when the directive is resumed (releaseHolds)
      if (run.children[node] !== undefined) continue; // a child run resumes on its own
      // Not announced again: it was when it started (a next attempt is, when it starts).
      run.work.repeat(node);
      try {
        dispatchStep(run, cn, cn.node, context);
      } catch (err) {
        run.work.failStep(cn, err);
      }
    }
  }
}
