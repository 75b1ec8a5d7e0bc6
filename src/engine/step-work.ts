/**
 * The work a run's steps have under way, and how it ends in an outcome: a step's work is tried
 * under its retry policy and its timeout ({@link StepWork.workStep}), and the outcome either
 * settles the step, which evaluates its `<assign>`s and chooses its edge ({@link
 * StepWork.settleStep}), or fails it ({@link StepWork.failStep}). Either goes to the machine as
 * an event, whose transition stops the step ({@link StepWork.stop}) and starts the next.
 */
import type { Actor } from 'xstate';
import type { StepNode } from '../directive/ast.js';
import type { CompiledNode } from '../compiler/compiled-directive.js';
import type { RunMachine } from '../compiler/machine-logic.js';
import type { RunContext, RunEvent, StepRecord, UndoItem } from '../compiler/run-context.js';
import { settle, type RunData } from '../compiler/settle.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { resumedAttempts } from './resumed-attempts.js';
import { runAttempts, type AttemptOutcome } from './run-attempts.js';
import type { RunHost } from './run-host.js';
import type { RunLifecycle } from './run-lifecycle.js';
import type { RunSpans } from './run-spans.js';
import { cancelled, stepTimedOut } from '../errors/stop-errors.js';

/** One try of a step's work: attempt `attempt`, stopped through `signal`. */
export type StepTry = (attempt: number, signal: AbortSignal) => Promise<unknown>;

/** Work under way for one step. */
export interface Inflight {
  controller: AbortController;
  /** Settles once the work has finished (or, when stopped, has actually stopped). */
  done?: Promise<void> | undefined;
}

/** What a run's step work reads and calls on its run (an {@link ActiveRun}). */
export interface WorkingRun {
  readonly runId: string;
  readonly host: Pick<RunHost, 'durable' | 'observer' | 'trackWork'>;
  /** The step records, where each try and retry is recorded. */
  readonly steps: Record<string, StepRecord>;
  /** What a step's `<assign>`s and edge conditions read, apart from the machine context. */
  readonly data: RunData;
  readonly spans: RunSpans | undefined;
  /** Told when the run may have become parkable (a step started waiting to retry). */
  readonly onParkable: (() => void) | undefined;
  /** Where a try's deadline and a retry's time are stored at once. */
  readonly lifecycle: Pick<RunLifecycle, 'checkpoint'>;
  /** The machine: a step whose work settles is settled against its context then. */
  readonly actor: Pick<Actor<RunMachine>, 'getSnapshot'>;
  /** Sends an event to the machine, while it runs. */
  send(event: RunEvent): void;
}

/** The steps a run has under way, and their outcomes (see the module comment). */
export class StepWork {
  /** Work under way, by step. */
  readonly inflight = new Map<string, Inflight>();
  /** Steps restarted after a resume whose work has not settled since (see {@link isRepeating}). */
  private readonly repeating = new Set<string>();
  /** Let go by this process: its work starts no new attempt. */
  private released = false;
  /** Sequential steps share one controller: see {@link controllerFor}. */
  private shared: AbortController | undefined;

  constructor(private readonly run: WorkingRun) {}

  /**
   * Runs a step's work with retries (under `policy`) and its timeout, then settles the step with
   * the result (under `collect` in the state, when given) or fails it. `items`: for a foreach step
   * that declares `<compensate>`, its items that completed, which its done event carries.
   */
  workStep(
    cn: CompiledNode,
    step: StepNode,
    work: StepTry,
    policy: StepNode['retry'],
    collect: string | undefined,
    items?: () => UndoItem[],
  ): void {
    const node = cn.name;
    const controller = this.controllerFor(cn);
    const inflight: Inflight = { controller, done: undefined };
    this.inflight.set(node, inflight);
    const settleWith = (outcome: AttemptOutcome<unknown>) => {
      if (this.inflight.get(node) !== inflight) return; // the step was stopped meanwhile
      this.inflight.delete(node);
      this.repeating.delete(node);
      if (outcome.ok)
        this.settleStep(
          cn,
          this.run.actor.getSnapshot().context,
          outcome.value,
          collect,
          items?.(),
        );
      else this.failStep(cn, outcome.error);
    };
    if ((policy?.attempts ?? 1) <= 1 && step.timeoutMs === undefined) {
      // One untimed try, the common case, without the retry loop's layers (every step pays them).
      let work1: Promise<unknown>;
      try {
        work1 = work(1, controller.signal);
      } catch (err) {
        work1 = Promise.reject(err);
      }
      inflight.done = work1.then(
        (value) => settleWith({ ok: true, value, attempts: 1 }),
        (err: unknown) =>
          settleWith({
            ok: false,
            error: DirigentError.from(controller.signal.aborted ? controller.signal.reason : err),
            attempts: 1,
          }),
      );
      return;
    }
    inflight.done = this.tries(node, step, work, policy, controller.signal).then(settleWith);
  }

  /** Stops whatever still runs for the step; false when nothing did. */
  stop(node: string): boolean {
    const inflight = this.inflight.get(node);
    if (inflight === undefined) return false;
    this.inflight.delete(node);
    // Stopped work is awaited by Engine.drain(), so a process does not exit under it.
    if (inflight.done) this.run.host.trackWork(inflight.done);
    inflight.controller.abort(cancelled(`Step "${node}"`));
    return true;
  }

  /**
   * The step runs again after a resume (its work was lost with the process that ran it): until it
   * settles, its calls may repeat calls made before.
   */
  repeat(node: string): void {
    this.repeating.add(node);
  }

  /** The step (or compensation) run again after a resume has ended: see {@link repeat}. */
  endRepeat(node: string): void {
    this.repeating.delete(node);
  }

  /** Whether the step's calls may repeat calls made before the run was resumed. */
  isRepeating(node: string): boolean {
    return this.repeating.size > 0 && this.repeating.has(node);
  }

  /**
   * Settles `cn` with `result` against `context` (the context the step ran in, or the current one);
   * `items`: see {@link workStep}.
   */
  settleStep(
    cn: CompiledNode,
    context: RunContext,
    result: unknown,
    collect?: string,
    items?: UndoItem[],
  ): void {
    this.settleStepWith(cn, () => {
      const event = settle(
        cn,
        context,
        this.run.data,
        result,
        collect ? { [collect]: result } : undefined,
      );
      if (items !== undefined) event.items = items;
      return event;
    });
  }

  /** Sends the event `make` settles `cn` with; fails the step when making it throws. */
  settleStepWith(cn: CompiledNode, make: () => RunEvent): void {
    let event: RunEvent;
    try {
      event = make();
    } catch (err) {
      this.failStep(cn, err);
      return;
    }
    this.run.send(event);
  }

  /** Fails the step; errors about the directive without a place of their own get the step's. */
  failStep(cn: CompiledNode, err: unknown): void {
    const e = DirigentError.from(err);
    const error = e.toJSON();
    if (error.location === undefined) error.location = cn.node.loc;
    this.run.send({ type: `fail:${cn.name}`, error });
  }

  /**
   * This process lets the run go: calls under way are left to finish (a process that resumes the
   * run takes their results), but no step starts another attempt here.
   */
  release(): void {
    this.released = true;
  }

  /** Whether this process let the run go (see {@link release}). */
  get isReleased(): boolean {
    return this.released;
  }

  /**
   * The tries of the work recorded as step `node` (a step that retries or has a timeout, or a
   * compensation: `unit` is where its timeout and its place in the directive are written), going
   * on where a resumed run left off; each try and retry is recorded in the step's record (and
   * stored by a durable host).
   */
  tries(
    node: string,
    unit: Pick<StepNode, 'timeoutMs' | 'loc'>,
    work: StepTry,
    policy: StepNode['retry'],
    stop: AbortSignal,
  ): Promise<AttemptOutcome<unknown>> {
    const run = this.run;
    const rec = run.steps[node]!;
    const { firstAttempt, firstDelayMs, firstTimeoutMs } = resumedAttempts(rec, Date.now());
    return runAttempts(
      (attempt, signal) => {
        if (this.released) throw released(run.runId);
        // What a resumed run needs: which attempt this is, and when it times out.
        const resumedAttempt = attempt === firstAttempt && firstTimeoutMs !== undefined;
        let changed = attempt !== rec.attempts || rec.retryAt !== undefined;
        rec.attempts = attempt;
        delete rec.retryAt;
        if (unit.timeoutMs !== undefined && !resumedAttempt) {
          rec.deadline = Date.now() + unit.timeoutMs;
          changed = true;
        }
        if (changed && run.host.durable) run.lifecycle.checkpoint();
        // An attempt taken over from a stopped process began there (its span says so).
        const takenOver =
          attempt === firstAttempt && firstDelayMs === undefined && this.isRepeating(node);
        if (attempt > 1 && !takenOver) run.spans?.attemptBegun(node);
        if (attempt > 1) run.host.observer?.stepStarted?.(run.runId, node, attempt);
        return work(attempt, signal);
      },
      {
        policy,
        timeoutMs: unit.timeoutMs,
        firstAttempt,
        firstTimeoutMs,
        firstDelayMs,
        spent: rec.redriven,
        timeoutError: () =>
          stepTimedOut(node, {
            ...(unit.timeoutMs !== undefined && { timeoutMs: unit.timeoutMs }),
            ...(unit.loc !== undefined && { location: unit.loc }),
          }),
        signal: stop,
        onRetry: (error, attempt, delayMs) => {
          run.spans?.attemptEnded(
            node,
            attempt,
            error.code === ErrorCode.STEP_TIMEOUT ? 'timed_out' : 'retried',
            error.toJSON(),
            delayMs,
          );
          rec.retryAt = Date.now() + delayMs;
          delete rec.deadline;
          delete rec.runsOn;
          if (run.host.durable) run.lifecycle.checkpoint();
          run.host.observer?.stepRetrying?.(run.runId, node, error.toJSON(), delayMs);
          run.onParkable?.();
        },
      },
    );
  }

  /**
   * The controller whose signal a step's work gets. Making an AbortSignal costs several µs on
   * Node 20, more than the rest of a step. A step outside parallel blocks is only ever stopped
   * together with the whole run (cancel, run timeout, a failed run), and such steps run one at
   * a time, so they share one controller, replaced once aborted. Steps in branches, which
   * `fail_fast` stops one by one, get their own.
   */
  private controllerFor(cn: CompiledNode): AbortController {
    if (cn.parallel !== null) return new AbortController();
    if (this.shared === undefined || this.shared.signal.aborted)
      this.shared = new AbortController();
    return this.shared;
  }
}

function released(runId: string): DirigentError {
  return cancelled(`Run ${runId}`, 'this process let it go (another may drive it now)');
}
