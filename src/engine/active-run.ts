/**
 * One run in this process: a live xstate actor plus the work its steps have under way. The
 * machine routes; this class performs the effects it names (`startStep`, `stopStep`,
 * `stepEnded`, …), keeps the step records, and feeds outcomes back as events.
 */
import { withSecretMarks } from '../policy/run-environment.js';
import { createActor, type Actor } from 'xstate';
import type { StepNode } from '../directive/ast.js';
import type { CompiledNode } from '../compiler/compiled-directive.js';
import type { RunMachine } from '../compiler/machine-logic.js';
import type { RunContext, RunEvent } from '../compiler/run-context.js';
import { scopeOf, settle, settleSkipped, type RunData } from '../compiler/settle.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { evaluateCondition } from '../expr/condition.js';
import { compileTemplate } from '../expr/template.js';
import { evaluateValue } from '../expr/value.js';
import { childOutcome } from './child-outcome.js';
import type { LoadedDirective } from './directive-loader.js';
import { ENGINE_DEFAULTS } from './engine-options.js';
import { executeAction } from './execute-action.js';
import { instructionText } from './instruction-text.js';
import { resumedAttempts } from './resumed-attempts.js';
import { runAttempts, type AttemptOutcome } from './run-attempts.js';
import { runForeach } from './run-foreach.js';
import type { LinkedRun } from './linked-run.js';
import type { RunHost } from './run-host.js';
import type { RunLineage } from './run-lineage.js';
import { runOutputs } from './run-outputs.js';
import type { RunRecord, WaitingStep } from './run-record.js';
import type { StoredRun } from './run-store.js';
import { StepBook } from './step-book.js';
import { StepWaits } from './step-waits.js';
import { RunSpans } from './run-spans.js';
import type { RunTrace, RunTrigger } from '../telemetry/run-trace.js';

export type { RunLineage } from './run-lineage.js';

/** Work under way for one step. */
interface Inflight {
  controller: AbortController;
  /** Settles once the work has finished (or, when stopped, has actually stopped). */
  done?: Promise<void> | undefined;
}

type Work = (attempt: number, signal: AbortSignal) => Promise<unknown>;

/** How a run comes to be live here: started (by a trigger, or as a child), or restored. */
export type RunStart =
  | {
      inputs: Record<string, unknown>;
      trigger: RunTrigger;
      trace?: RunTrace;
      tools?: Record<string, string>;
    }
  | { stored: StoredRun };

/** A run live in this process (see the module comment). */
export class ActiveRun extends StepBook {
  readonly actor: Actor<RunMachine>;
  readonly inflight = new Map<string, Inflight>();
  readonly waiting = new StepWaits((w) =>
    this.fail(
      this.node(w.step),
      DirigentError.fatal(
        ErrorCode.WAIT_TIMEOUT,
        `Step "${w.step}" waited longer than its timeout for signal "${w.signal}".`,
      ),
    ),
  );
  /** Child runs started by this run, by the step that started them. */
  readonly children: Record<string, string>;
  private runTimer: NodeJS.Timeout | undefined;
  /** Told when the run may have become parkable (a step started waiting to retry; see parkable.ts). */
  onParkable: (() => void) | undefined;
  /** Steps restarted by {@link restartInterrupted} whose work has not settled since. */
  private readonly repeating = new Set<string>();
  /** Let go by this process ({@link release}): its work starts no new attempt. */
  private released = false;
  /** The snapshot when the run was let go. */
  private heldSnapshot: unknown;
  /** Sequential steps share one controller: see {@link controllerFor}. */
  private shared: AbortController | undefined;
  private readonly data: RunData;
  /** The run's place in a trace (kept and stored even where this process records no telemetry). */
  readonly trace: RunTrace | undefined;
  /** Content hashes of the tools the run's submitter resolved; each call carries its tool's. */
  readonly toolHashes: Record<string, string> | undefined;

  constructor(
    host: RunHost,
    readonly loaded: LoadedDirective,
    readonly lineage: RunLineage,
    runId: string,
    start: RunStart,
  ) {
    const stored = 'stored' in start ? start.stored : undefined;
    super(
      host,
      stored?.record ?? {
        runId,
        directive: loaded.itemId,
        status: 'running',
        outputs: null,
        steps: [],
        error: null,
        startedAt: Date.now(),
        endedAt: null,
      },
      stored?.steps,
      stored?.counters,
    );
    this.children = { ...stored?.children };
    this.toolHashes = stored?.tools ?? ('tools' in start ? start.tools : undefined);
    const t = host.telemetry;
    this.trace =
      stored?.trace ??
      ('trace' in start ? start.trace : undefined) ??
      t?.newRunTrace(runId, 'trigger' in start ? start.trigger : 'library');
    if (t !== undefined && this.trace !== undefined) this.spans = new RunSpans(t, this.trace, this);
    this.data = {
      steps: this.steps,
      env: withSecretMarks(host.env, loaded.compiled.directive.secrets),
    };
    const machine = host.providedMachine(loaded.compiled.machine);
    this.actor = stored
      ? createActor(machine, { snapshot: stored.snapshot as never, input: { inputs: {} } })
      : createActor(machine, {
          input: { inputs: (start as { inputs: Record<string, unknown> }).inputs },
        });
    if (stored === undefined) this.spans?.started();
    this.actor.subscribe({ next: () => this.onSnapshot(), error: (err) => this.crash(err) });
  }

  /** Whether a child run (which may wait) was ever started; spares the idle check otherwise. */
  private get hasChildren(): boolean {
    return this.counters.spawns > 0;
  }

  get directive() {
    return this.loaded.compiled.directive;
  }

  /** The secrets the directive declares: tool parameters leave their values to the dispatcher. */
  get secretNames(): ReadonlySet<string> {
    return secretSet(this.loaded.compiled.directive);
  }

  /** Starts (or, for a restored run, re-arms the timers of) the run. */
  begin(): void {
    const seconds = this.directive.limits.durationSeconds;
    if (seconds !== undefined) {
      const error = {
        code: ErrorCode.RUN_TIMEOUT,
        message: `The run took longer than its limit of ${seconds}s (<limits duration_seconds>).`,
        step: null,
      };
      const remaining = this.record.startedAt + seconds * 1000 - Date.now();
      this.runTimer = setTimeout(
        () => this.send({ type: 'run.fail', error }),
        Math.max(0, remaining),
      );
    }
    // Starting the actor reports its first state, which a durable engine stores (onSnapshot): a
    // process that dies in the first step leaves a run that can be resumed (and a parent that
    // can find its child).
    this.actor.start();
    // After start: a restored wait whose deadline passed while stored fails right here.
    for (const w of this.record.waiting ?? []) if (w.runId === undefined) this.waiting.add(w);
    this.queueIdleCheck();
  }

  send(event: RunEvent): void {
    if (this.actor.getSnapshot().status === 'active') this.actor.send(event);
  }

  /** Delivers a signal to the step waiting for it; false when none waits for `name`. */
  deliver(name: string, payload: unknown): boolean {
    const w = this.waiting.take(name);
    if (w === undefined) return false;
    this.resumeRunning();
    this.finish(this.node(w.step), this.actor.getSnapshot().context, payload);
    return true;
  }

  /** Links a restored child run (or the record of one that ended) to the step that started it. */
  adoptChild(node: string, child: LinkedRun | RunRecord): void {
    const cn = this.node(node);
    if (cn.node.kind === 'step')
      this.runWork(cn, cn.node, () => childOutcome(child), undefined, undefined);
  }

  /** Records the child run a step started (stored at once by a durable engine, for resuming). */
  noteChild(node: string, childId: string): void {
    this.children[node] = childId;
    if (this.host.durable) this.checkpoint();
  }

  /** Counts one more child run against `limit`; false when the limit is reached. */
  reserveSpawn(limit: number): boolean {
    if (this.counters.spawns >= limit) return false;
    this.counters.spawns++;
    return true;
  }

  cancel(reason?: string): void {
    this.send({ type: 'run.cancel', ...(reason !== undefined && { reason }) });
  }

  // ---- effects named by the machine ----

  /** `startStep`: run a step (or settle a parallel block whose branches all ended). */
  startStep(context: RunContext, node: string): void {
    const cn = this.node(node);
    const maxSteps = this.directive.limits.maxSteps ?? ENGINE_DEFAULTS.maxSteps;
    if (cn.node.kind === 'step' && ++this.counters.transitions > maxSteps) {
      const message = `The run took more than ${maxSteps} steps (<limits max_steps>); is a loop missing its exit?`;
      this.send({
        type: 'run.fail',
        error: { code: ErrorCode.MAX_STEPS_EXCEEDED, message, step: node },
      });
      return;
    }
    if (cn.node.kind === 'parallel') {
      const branches = Object.fromEntries(
        cn.node.branches.map((b) => [b.name, this.steps[b.name]?.status ?? 'completed']),
      );
      this.finish(cn, context, { branches });
      return;
    }
    const step = cn.node;
    this.stepStarted(node);
    try {
      if (step.condition && !evaluateCondition(step.condition, scopeOf(context, this.data))) {
        this.steps[node]!.attempts = 0;
        this.send(settleSkipped(cn, context, this.data));
        return;
      }
      this.host.observer?.stepStarted?.(this.runId, node, 1);
      this.runAction(cn, step, context);
    } catch (err) {
      this.fail(cn, err);
    }
  }

  /**
   * Runs again the steps a resumed run had under way when its last process stopped (their records
   * say `running`): the machine is still in their states, only the work was lost. A tool job that
   * finished meanwhile is not run twice: the queue answers its deterministic job id.
   */
  restartInterrupted(): void {
    const context = this.actor.getSnapshot().context;
    const waits = new Set((this.record.waiting ?? []).map((w) => w.step));
    for (const [node, rec] of Object.entries(this.steps)) {
      const cn = this.loaded.compiled.nodes.get(node);
      if (rec.status !== 'running' || cn?.node.kind !== 'step' || waits.has(node)) continue;
      if (this.children[node] !== undefined) continue; // a child run resumes on its own
      // Not announced again: it was when it started (a next attempt is, when it starts).
      this.repeating.add(node);
      try {
        this.runAction(cn, cn.node, context);
      } catch (err) {
        this.fail(cn, err);
      }
    }
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

  // ---- actions ----

  private runAction(cn: CompiledNode, step: StepNode, context: RunContext): void {
    const action = step.action;
    const scope = scopeOf(context, this.data);
    switch (action.type) {
      case 'execute': {
        const policy =
          step.retry ?? (action.itemType === 'tool' ? this.toolPolicy(action.itemId) : undefined);
        this.runWork(
          cn,
          step,
          (attempt, signal) => executeAction(this, action, scope, cn.name, attempt, signal),
          policy,
          undefined,
        );
        return;
      }
      case 'foreach': {
        // Items retry one by one under the tool's policy; the step itself only under its <retry>.
        const itemPolicy = step.retry ?? this.toolPolicy(action.execute.itemId);
        const work: Work = (_attempt, signal) =>
          runForeach(action, scope, signal, async (exec, vars, itemSignal) => {
            const outcome = await runAttempts(
              (n, s) =>
                executeAction(
                  this,
                  exec,
                  { ...scope, vars },
                  cn.name,
                  n,
                  s,
                  vars[`${action.as}_index`] as number,
                ),
              { policy: itemPolicy, signal: itemSignal },
            );
            if (!outcome.ok) throw outcome.error;
            return outcome.value;
          });
        this.runWork(cn, step, work, step.retry, action.collect);
        return;
      }
      case 'render':
        this.finish(cn, context, compileTemplate(action.template).evaluate(scope));
        return;
      case 'instruction':
      case 'wait': {
        const w: WaitingStep = { step: cn.name, signal: action.signal };
        if (action.type === 'instruction') w.text = instructionText(action.text, scope);
        if (action.timeoutMs !== undefined) w.deadline = Date.now() + action.timeoutMs;
        this.waiting.add(w);
        return;
      }
      case 'return': {
        const out = action.output;
        const returned = out
          ? Object.fromEntries(Object.entries(out).map(([k, v]) => [k, evaluateValue(v, scope)]))
          : { ...context.state };
        this.finishWith(cn, () => ({ ...settle(cn, context, this.data, null), returned }));
        return;
      }
      case 'gate':
        this.finish(cn, context, null);
        return;
    }
  }

  /** The tool's own retry policy, when its id is known before the step runs. */
  private toolPolicy(itemId: string) {
    return itemId.includes('{') ? undefined : this.host.dispatcher.describe(itemId)?.retry;
  }

  /** Runs a step's work with retries and its timeout, then settles or fails the step. */
  private runWork(
    cn: CompiledNode,
    step: StepNode,
    work: Work,
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
      if (outcome.ok) this.finish(cn, this.actor.getSnapshot().context, outcome.value, collect);
      else this.fail(cn, outcome.error);
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
    const rec = this.steps[node]!;
    const { firstAttempt, firstDelayMs, firstTimeoutMs } = resumedAttempts(rec, Date.now());
    inflight.done = runAttempts(
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
        signal: controller.signal,
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
          if (this.host.durable) this.checkpoint();
          this.host.observer?.stepRetrying?.(this.runId, node, error.toJSON(), delayMs);
          this.onParkable?.();
        },
      },
    ).then(settleWith);
  }

  /** Whether the step's calls may repeat calls made before the run was resumed. */
  isRepeating(node: string): boolean {
    return this.repeating.size > 0 && this.repeating.has(node);
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

  /** Settles `cn` with `result` against `context` (the context the step ran in, or the current one). */
  private finish(cn: CompiledNode, context: RunContext, result: unknown, collect?: string): void {
    this.finishWith(cn, () =>
      settle(cn, context, this.data, result, collect ? { [collect]: result } : undefined),
    );
  }

  private finishWith(cn: CompiledNode, make: () => RunEvent): void {
    let event: RunEvent;
    try {
      event = make();
    } catch (err) {
      this.fail(cn, err);
      return;
    }
    this.send(event);
  }

  /** Fails the step; errors about the directive without a place of their own get the step's. */
  private fail(cn: CompiledNode, err: unknown): void {
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

  // ---- lifecycle ----

  private onSnapshot(): void {
    this.flushStopped();
    const snap = this.actor.getSnapshot();
    if (snap.status === 'done') {
      if (this.runTimer) clearTimeout(this.runTimer);
      this.end(snap.value as unknown as string, snap.context);
      return;
    }
    if (this.host.durable && this.record.status === 'running') this.checkpoint();
    if (this.waiting.size > 0 || this.hasChildren) this.queueIdleCheck();
  }

  /** The steps this run waits on, or undefined while real work is under way. */
  protected waitingSteps(): WaitingStep[] | undefined {
    if (this.actor.getSnapshot().status !== 'active') return undefined;
    const nested: WaitingStep[] = [];
    // Work in flight is either real work or a child directive that itself waits.
    for (const node of this.inflight.keys()) {
      const childId = this.children[node];
      const child = childId === undefined ? undefined : this.host.activeRun(childId);
      if (!child?.isWaiting) return undefined; // real work under way
      nested.push(...(child.record.waiting ?? []).map((w) => ({ runId: child.runId, ...w })));
    }
    return [...this.waiting.values(), ...nested];
  }

  protected outputs(context: RunContext): Record<string, unknown> {
    return runOutputs(this.directive, context, this.data);
  }

  protected persist(): Promise<void> {
    return this.host.persist(this);
  }

  protected parentRunId(): string | null {
    return this.lineage.parentRunId;
  }

  protected override onEnded(): void {
    this.spans?.ended(this.actor.getSnapshot().context.inputs);
  }

  /**
   * Stops timers so the process can exit; a waiting run lives on in the store. Calls under way
   * are left to finish (a process that resumes the run takes their results), but no step starts
   * another attempt here.
   */
  release(): void {
    this.released = true;
    this.heldSnapshot = this.actor.getPersistedSnapshot();
    if (this.runTimer) clearTimeout(this.runTimer);
    this.waiting.release();
    this.actor.stop();
  }

  /** A run let go stores nothing more: another process may be driving it already. */
  protected override checkpoint(): void {
    if (!this.released) super.checkpoint();
  }

  /**
   * The machine's snapshot to store: as it stands, or, once the run is let go, as it stood then (a
   * store write still under way must not record the stopped actor, which would never run again).
   */
  persistedSnapshot(): unknown {
    return this.heldSnapshot ?? this.actor.getPersistedSnapshot();
  }
}

function released(runId: string): DirigentError {
  return DirigentError.fatal(ErrorCode.CANCELLED, `Run ${runId} was let go by this process.`);
}

const secretSets = new WeakMap<object, ReadonlySet<string>>();

function secretSet(directive: { secrets: readonly string[] }): ReadonlySet<string> {
  let set = secretSets.get(directive);
  if (set === undefined) secretSets.set(directive, (set = new Set(directive.secrets)));
  return set;
}
