/**
 * What a run's steps have under way, and how it ends in an outcome: a step's work is tried under
 * its retry policy and its timeout ({@link StepWork.workStep}), a wait lasts until its signal or
 * its deadline, and the outcome either settles the step, which evaluates its `<assign>`s and
 * chooses its edge ({@link StepWork.settleStep}), or fails it ({@link StepWork.failStep}).
 * Either goes to the machine as an event, whose transition stops the step ({@link
 * StepWork.stopStep}) and starts the next. {@link ActiveRun} adds the machine and dispatches
 * each step it enters (`dispatch-step.ts`).
 */
import type { Actor } from 'xstate';
import type { StepNode } from '../directive/ast.js';
import type { CompiledNode } from '../compiler/compiled-directive.js';
import type { RunMachine } from '../compiler/machine-logic.js';
import type { RunContext, RunEvent, StepRecord } from '../compiler/run-context.js';
import { settle, type RunData } from '../compiler/settle.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { withSecretMarks } from '../policy/run-environment.js';
import type { LoadedDirective } from './directive-loader.js';
import { resumedAttempts } from './resumed-attempts.js';
import { runAttempts, type AttemptOutcome } from './run-attempts.js';
import type { RunCounters } from './run-counters.js';
import type { RunHost } from './run-host.js';
import type { RunRecord } from './run-record.js';
import { StepBook } from './step-book.js';
import { StepWaits } from './step-waits.js';

/** One try of a step's work: attempt `attempt`, stopped through `signal`. */
export type StepTry = (attempt: number, signal: AbortSignal) => Promise<unknown>;

/** Work under way for one step. */
export interface Inflight {
  controller: AbortController;
  /** Settles once the work has finished (or, when stopped, has actually stopped). */
  done?: Promise<void> | undefined;
}

/** The steps a run has under way, and their outcomes (see the module comment). */
export abstract class StepWork extends StepBook {
  /** Work under way, by step. */
  readonly inflight = new Map<string, Inflight>();
  /** Steps waiting for a signal. */
  readonly waiting = new StepWaits((w) =>
    this.failStep(
      this.node(w.step),
      DirigentError.fatal(
        ErrorCode.WAIT_TIMEOUT,
        `Step "${w.step}" waited longer than its timeout for signal "${w.signal}".`,
      ),
    ),
  );
  /** What the run's templates, conditions and expressions read, apart from the machine context. */
  readonly data: RunData;
  /** Steps restarted after a resume whose work has not settled since (see {@link isRepeating}). */
  protected readonly repeating = new Set<string>();
  /** Let go by this process: its work starts no new attempt. */
  protected released = false;
  /** Sequential steps share one controller: see {@link controllerFor}. */
  private shared: AbortController | undefined;
  /** Told when the run may have become parkable (a step started waiting to retry; see parkable.ts). */
  onParkable: (() => void) | undefined;
  /** The run's machine, which the settled steps' events go to. */
  abstract readonly actor: Actor<RunMachine>;

  protected constructor(
    host: RunHost,
    readonly loaded: LoadedDirective,
    record: RunRecord,
    steps: Record<string, StepRecord> | undefined,
    counters: Partial<RunCounters> | undefined,
  ) {
    super(host, record, steps, counters);
    this.data = {
      steps: this.steps,
      env: withSecretMarks(host.env, loaded.compiled.directive.secrets),
    };
  }

  /** Sends an event to the machine, while it runs. */
  abstract send(event: RunEvent): void;

  /**
   * Runs a step's work with retries (under `policy`) and its timeout, then settles the step with
   * the result (under `collect` in the state, when given) or fails it.
   */
  workStep(
    cn: CompiledNode,
    step: StepNode,
    work: StepTry,
    policy: StepNode['retry'],
    collect: string | undefined,
  ): void {
    const node = cn.name;
    const controller = this.controllerFor(cn);
    const inflight: Inflight = { controller, done: undefined };
    this.inflight.set(node, inflight);
    const settleWith = (outcome: AttemptOutcome<unknown>) => {
      if (this.inflight.get(node) !== inflight) return; // the step was stopped meanwhile
      this.inflight.delete(node);
      this.repeating.delete(node);
      if (outcome.ok) this.settleStep(cn, this.actor.getSnapshot().context, outcome.value, collect);
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
    inflight.done = this.tryStep(cn, step, work, policy, controller.signal).then(settleWith);
  }

  /** `stopStep`: the machine left the step; stop whatever still runs for it. */
  stopStep(node: string): void {
    const wasWaiting = this.waiting.dropStep(node);
    const inflight = this.inflight.get(node);
    if (inflight === undefined && !wasWaiting) return;
    this.inflight.delete(node);
    // Stopped work is awaited by Engine.drain(), so a process does not exit under it.
    if (inflight?.done) this.host.trackWork(inflight.done);
    inflight?.controller.abort(
      DirigentError.fatal(ErrorCode.CANCELLED, `Step "${node}" was stopped.`),
    );
    this.stepStopped(node);
  }

  /** Whether the step's calls may repeat calls made before the run was resumed. */
  isRepeating(node: string): boolean {
    return this.repeating.size > 0 && this.repeating.has(node);
  }

  /** Settles `cn` with `result` against `context` (the context the step ran in, or the current one). */
  settleStep(cn: CompiledNode, context: RunContext, result: unknown, collect?: string): void {
    this.settleStepWith(cn, () =>
      settle(cn, context, this.data, result, collect ? { [collect]: result } : undefined),
    );
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
    this.send(event);
  }

  /** Fails the step; errors about the directive without a place of their own get the step's. */
  failStep(cn: CompiledNode, err: unknown): void {
    const e = DirigentError.from(err);
    const error = e.toJSON();
    if (error.location === undefined) error.location = cn.node.loc;
    this.send({ type: `fail:${cn.name}`, error });
  }

  /** The compiled node of a step or block. */
  node(name: string): CompiledNode {
    const cn = this.loaded.compiled.nodes.get(name);
    if (cn === undefined) throw new DirigentError(ErrorCode.INTERNAL, `Unknown node "${name}".`);
    return cn;
  }

  /**
   * The tries of a step that retries or has a timeout, going on where a resumed run left off;
   * each try and retry is recorded in the step's record (and stored by a durable host).
   */
  private tryStep(
    cn: CompiledNode,
    step: StepNode,
    work: StepTry,
    policy: StepNode['retry'],
    stop: AbortSignal,
  ): Promise<AttemptOutcome<unknown>> {
    const node = cn.name;
    const rec = this.steps[node]!;
    const { firstAttempt, firstDelayMs, firstTimeoutMs } = resumedAttempts(rec, Date.now());
    return runAttempts(
      (attempt, signal) => {
        if (this.released) throw released(this.runId);
        // What a resumed run needs: which attempt this is, and when it times out.
        const resumedAttempt = attempt === firstAttempt && firstTimeoutMs !== undefined;
        let changed = attempt !== rec.attempts || rec.retryAt !== undefined;
        rec.attempts = attempt;
        delete rec.retryAt;
        if (step.timeoutMs !== undefined && !resumedAttempt) {
          rec.deadline = Date.now() + step.timeoutMs;
          changed = true;
        }
        if (changed && this.host.durable) this.checkpoint();
        // An attempt taken over from a stopped process began there (its span says so).
        const takenOver =
          attempt === firstAttempt && firstDelayMs === undefined && this.isRepeating(node);
        if (attempt > 1 && !takenOver) this.spans?.attemptBegun(node);
        if (attempt > 1) this.host.observer?.stepStarted?.(this.runId, node, attempt);
        return work(attempt, signal);
      },
      {
        policy,
        timeoutMs: step.timeoutMs,
        firstAttempt,
        firstTimeoutMs,
        firstDelayMs,
        timeoutError: () =>
          DirigentError.retryable(
            ErrorCode.STEP_TIMEOUT,
            `Step "${node}" ran longer than its timeout of ${(step.timeoutMs ?? 0) / 1000}s; raise <timeout seconds="…"> if it needs longer.`,
            { location: step.loc },
          ),
        signal: stop,
        onRetry: (error, attempt, delayMs) => {
          this.spans?.attemptEnded(
            node,
            attempt,
            error.code === ErrorCode.STEP_TIMEOUT ? 'timed_out' : 'retried',
            error.toJSON(),
            delayMs,
          );
          rec.retryAt = Date.now() + delayMs;
          delete rec.deadline;
          delete rec.runsOn;
          if (this.host.durable) this.checkpoint();
          this.host.observer?.stepRetrying?.(this.runId, node, error.toJSON(), delayMs);
          this.onParkable?.();
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
  return DirigentError.fatal(ErrorCode.CANCELLED, `Run ${runId} was let go by this process.`);
}
