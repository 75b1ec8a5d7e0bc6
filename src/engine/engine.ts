/**
 * The embedded engine: runs compiled directives in this process, through the tool dispatcher,
 * keeping runs in a run store, and hosts them (what a run asks of it: `run-host.ts`). Each run is
 * an {@link ActiveRun}, whose module comment follows the path of a step. The distributed engine
 * reuses the same compiled machines and run records with a Redis store and a BullMQ dispatcher.
 */
import { checkSignalPayload } from '../policy/check-json-size.js';
import { allowedEnvironment } from '../policy/run-environment.js';
import { randomUUID } from 'node:crypto';
import type { Directive } from '../directive/ast.js';
import type { RunMachine } from '../compiler/machine-logic.js';
import type { RunContext } from '../compiler/run-context.js';
import type { RunData } from '../compiler/settle.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { ToolDispatcher } from '../tools/tool-dispatcher.js';
import { ActiveRun } from './active-run.js';
import { checkRunAnswer } from './check-answer.js';
import { childOutcome } from './child-outcome.js';
import type { CancelOptions } from './cancel-options.js';
import type { DirectiveLoader, LoadedDirective } from './directive-loader.js';
import {
  ENGINE_DEFAULTS,
  type EngineObserver,
  type EngineOptions,
  type PauseView,
} from './engine-options.js';
import { MemoryRunStore } from './memory-run-store.js';
import { redrivenRun } from './redrive.js';
import { restoredRun, storedDirective } from './restored-run.js';
import { provideRunEffects } from './run-effects.js';
import type { ParentRun, RunHost, StorableRun } from './run-host.js';
import type { RunLineage } from './run-lineage.js';
import { runOutputs } from './run-outputs.js';
import type { RunRecord } from './run-record.js';
import type { RunStore, StoredRun } from './run-store.js';
import { findWaiter, signalWaiter } from './signal-waiters.js';
import type { StartOptions } from './start-options.js';
import { toStoredRun } from './to-stored-run.js';
import { runTagsOf } from './run-tags.js';
import { validateInputs } from './validate-inputs.js';
import { Telemetry, type SpanParent } from '../telemetry/telemetry.js';
import { runNotFound, runNotRedrivable, runNotWaiting } from '../errors/run-errors.js';
import { runLetGo } from '../errors/stop-errors.js';

export type { StartOptions } from './start-options.js';
export type { CancelOptions } from './cancel-options.js';

/** Runs directives in this process; the host of their runs (see `run-host.ts`). */
export class Engine implements RunHost {
  readonly projectDir: string;
  readonly dispatcher: ToolDispatcher;
  readonly loader: DirectiveLoader;
  readonly store: RunStore;
  /** What `{env:…}` reads: the allowed variables only (see `policy/run-environment.ts`). */
  readonly env: Record<string, string | undefined>;
  readonly observer: EngineObserver | undefined;
  /** Whether runs are stored after every transition (see {@link EngineOptions.durable}). */
  readonly durable: boolean;
  /** Where spans and metrics go; undefined records nothing. */
  readonly telemetry: Telemetry | undefined;
  private readonly pauses: PauseView | undefined;
  private readonly active = new Map<string, ActiveRun>();
  private readonly provided = new WeakMap<RunMachine, RunMachine>();
  private readonly byActor = new WeakMap<object, ActiveRun>();
  private readonly work = new Set<Promise<unknown>>();
  /** A live run by id (for finding a signal's waiter among child runs). */
  private readonly live = (runId: string) => this.active.get(runId);

  constructor(options: EngineOptions) {
    this.projectDir = options.projectDir;
    this.dispatcher = options.dispatcher;
    this.loader = options.loader;
    this.store = options.store ?? new MemoryRunStore();
    this.env = allowedEnvironment(
      options.env ?? process.env,
      this.loader.policy,
      this.loader.items.spaces,
    );
    this.observer = options.observer;
    this.durable = options.durable ?? false;
    this.telemetry = Telemetry.of(options.telemetry);
    this.pauses = options.pauses;
  }

  /** Whether runs of `directive` hold their next steps (see `operations/pause.ts`). */
  isPaused(directive: string): boolean {
    return this.pauses?.isPaused(directive) ?? false;
  }

  /**
   * Begins the held steps of the paused runs live here whose directive is no longer paused;
   * resolves with those runs (each `settled()` says when it ends or waits again).
   */
  releaseHolds(): ActiveRun[] {
    const released: ActiveRun[] = [];
    for (const run of [...this.active.values()])
      if (run.book.holding && run.effects.releaseHolds()) released.push(run);
    return released;
  }

  /**
   * Validates the inputs (throwing `INVALID_INPUTS` before anything runs) and starts a run.
   * Returns the live run; `settled()` resolves when it ends or waits.
   */
  start(
    loaded: LoadedDirective,
    inputs: Record<string, unknown>,
    options: StartOptions = {},
  ): ActiveRun {
    const valid = validateInputs(loaded.compiled.directive, inputs, this.loader.policy.limits);
    const maxDepth = loaded.compiled.directive.limits.depth ?? ENGINE_DEFAULTS.depth;
    return this.launch(loaded, valid, { depth: 0, maxDepth, parentRunId: null }, options);
  }

  /** Runs to the end (or to a wait) and returns the run record; invalid inputs reject. */
  async run(
    loaded: LoadedDirective,
    inputs: Record<string, unknown>,
    options: StartOptions = {},
  ): Promise<RunRecord> {
    return this.start(loaded, inputs, options).settled();
  }

  /**
   * Sends a signal to a waiting run (restoring it from the store if needed), then waits for it to
   * settle. A payload that does not match the waiting step's `<answer>`s is refused
   * (`INVALID_PAYLOAD`) and the run waits on as it was.
   */
  async signal(runId: string, name: string, payload: unknown): Promise<RunRecord> {
    return (await this.deliverSignal(runId, name, payload)).settled();
  }

  /**
   * {@link signal}, resolving as soon as the signal is delivered, with the run it resumed (whose
   * `settled()` says when it ends or waits again).
   */
  async deliverSignal(runId: string, name: string, payload: unknown): Promise<ActiveRun> {
    checkSignalPayload(name, payload, this.loader.policy.limits);
    const run = await this.attach(runId);
    if (!run.isWaiting && run.record.status !== 'running') {
      const record = await run.settled();
      throw runNotWaiting(runId, record.status, 'signal', record.error);
    }
    const waiter = signalWaiter(run, name, this.live);
    // Refused before it reaches the run, which waits on as it was.
    checkRunAnswer(waiter, name, payload);
    waiter.deliver(name, payload);
    return run;
  }

  /**
   * Cancels a run and the work it has running (restoring it first if it waits in the store), after
   * the compensations of its completed steps unless `options.compensate` is false; resolves once
   * it has ended (or waits, should a compensation's child directive wait).
   */
  async cancelRun(runId: string, reason?: string, options: CancelOptions = {}): Promise<RunRecord> {
    return (await this.cancelling(runId, reason, options)).settled();
  }

  /**
   * {@link cancelRun}, resolving with the run as soon as it is told (its compensations, if any,
   * still to run: its `settled()` says when it has ended).
   */
  async cancelling(
    runId: string,
    reason?: string,
    options: CancelOptions = {},
  ): Promise<ActiveRun> {
    const run = await this.attach(runId);
    run.resumeRunning();
    run.cancel(reason, options.compensate ?? true);
    return run;
  }

  /** Fire-and-forget cancel of an active run (used for child runs, and by a run's driver). */
  cancel(runId: string, reason?: string, options: CancelOptions = {}): void {
    this.active.get(runId)?.cancel(reason, options.compensate ?? true);
  }

  /**
   * Resolves once all step work that was stopped (by a cancel, the run's timeout, a failed
   * sibling) has actually stopped: a cancelled shell command's process group is gone by then.
   * Call it before the process exits, so that no work outlives the run that owned it.
   */
  async drain(): Promise<void> {
    while (this.work.size > 0) await Promise.allSettled([...this.work]);
  }

  /** Records stopped step work for {@link drain}. */
  trackWork(work: Promise<unknown>): void {
    this.work.add(work);
    void work.finally(() => this.work.delete(work));
  }

  /**
   * Lets go of one run that waits (and of its child runs): its timers stop and it leaves this
   * engine; it lives on in the store, for whichever process delivers its signal or wakes it.
   */
  releaseRun(runId: string): void {
    const run = this.active.get(runId);
    if (run === undefined) return;
    for (const childId of Object.values(run.children)) this.releaseRun(childId);
    run.release();
    this.active.delete(runId);
  }

  /** Stops timers of runs that wait, so the process can exit; they live on in the store. */
  release(): void {
    for (const run of this.active.values()) run.release();
    this.active.clear();
  }

  // ---- the host of its runs (see run-host.ts) ----

  /** The machine with this engine's effects, built once per compiled machine. */
  providedMachine(machine: RunMachine): RunMachine {
    let m = this.provided.get(machine);
    if (m === undefined) {
      m = provideRunEffects(machine, (self) => this.byActor.get(self as object)!);
      this.provided.set(machine, m);
    }
    return m;
  }

  /** Makes a run just built live here: found by id, and by its actor for the machine's effects. */
  register(run: ActiveRun): void {
    this.active.set(run.runId, run);
    this.byActor.set(run.actor, run);
  }

  /** The run ended and was stored: it leaves this engine. */
  unregister(runId: string): void {
    this.active.delete(runId);
  }

  /** The runs live in this process (child runs included). */
  activeRuns(): IterableIterator<ActiveRun> {
    return this.active.values();
  }

  /** A run live in this process. */
  activeRun(runId: string): ActiveRun | undefined {
    return this.active.get(runId);
  }

  /** Starts a child directive of `parent`: resolved from the parent's file, one level deeper. */
  async startChild(
    ref: string,
    inputs: Record<string, unknown>,
    parent: ParentRun,
    parentSpan: SpanParent | undefined,
    child: { runId: string; again: boolean },
  ): Promise<ActiveRun | RunRecord> {
    const { runId } = child;
    if (child.again) {
      // The parent's worker may have stored the child before it stopped: take that one up.
      const stored = this.active.get(runId) ?? (await this.store.load(runId));
      if (stored instanceof ActiveRun) return stored;
      const status = stored?.record.status;
      if (status === 'running' || status === 'waiting' || status === 'paused') {
        if (parent.isReleased) throw runLetGo(parent.runId, 'this process let it go');
        return this.attach(runId, true);
      }
      if (stored !== undefined) return stored.record; // it ended: its outcome settles the step
    }
    const file = await this.loader.resolve(ref, parent.loaded.file);
    const loaded = await this.loader.loadFile(file);
    // Let go while the child's directive loaded: an orphan started now would run beside the child
    // that the parent, resumed here or elsewhere, starts under the same id.
    if (parent.isReleased) throw runLetGo(parent.runId, 'this process let it go');
    const valid = validateInputs(loaded.compiled.directive, inputs, this.loader.policy.limits);
    const lineage: RunLineage = {
      depth: parent.lineage.depth + 1,
      maxDepth: parent.lineage.maxDepth,
      parentRunId: parent.runId,
    };
    const trace = parentSpan && this.telemetry?.newRunTrace(runId, 'child', parentSpan);
    return this.launch(loaded, valid, lineage, {
      runId,
      trigger: 'child',
      ...(trace && { trace }),
      ...(parent.toolHashes && { tools: parent.toolHashes }),
    });
  }

  /** The child's outputs, or a `CHILD_FAILED` error carrying the child's own error. */
  awaitChild(child: ActiveRun | RunRecord): Promise<unknown> {
    return childOutcome(child);
  }

  /** Stores the run as it stands. */
  async persist(run: StorableRun): Promise<void> {
    await this.store.save(toStoredRun(run, this.projectDir));
  }

  /** Evaluates the declared outputs when a run completes (graphs: the return output or the state). */
  outputsOf(d: Directive, context: RunContext, data: RunData): Record<string, unknown> {
    return runOutputs(d, context, data);
  }

  // ---- internals ----

  private launch(
    loaded: LoadedDirective,
    inputs: Record<string, unknown>,
    lineage: RunLineage,
    options: StartOptions,
  ): ActiveRun {
    const runId = options.runId ?? randomUUID();
    if (this.active.has(runId))
      throw DirigentError.fatal(ErrorCode.RUN_CONFLICT, `Run ${runId} is already under way here.`);
    const tags = runTagsOf(loaded.compiled.directive, inputs, options.tags);
    const run = new ActiveRun(this, loaded, lineage, runId, {
      inputs,
      trigger: options.trigger ?? 'library',
      ...(options.from && { from: options.from }),
      ...(options.trace && { trace: options.trace }),
      ...(options.tools && { tools: options.tools }),
      ...(tags && { tags }),
    });
    this.register(run);
    // Told before its first step: a feed's `run.started` comes before anything of the run.
    this.observer?.runStarted?.(run.record);
    run.begin();
    if (options.from !== undefined) {
      // A rerun begins in its first step, entered as a restored run's are: its work starts here.
      this.observer?.stepStarted?.(run.runId, options.from.of.step, 1);
      run.restartInterrupted();
    }
    return run;
  }

  /**
   * Resumes a run another process was driving when it stopped (crashed, killed, or handed the
   * run back): the stored snapshot is restored, timers are re-armed, and steps that were under
   * way run again. A run already live here is returned as it is; an ended one rejects with
   * `RUN_NOT_WAITING`.
   */
  async resume(runId: string): Promise<ActiveRun> {
    return this.attach(runId, true);
  }

  /**
   * Redrives a run that failed or was cancelled (see `redrive.ts`): it goes on under its id from
   * the steps that failed or were under way, in this process, and is returned once it does
   * (`settled()` says when it ends or waits again). `RUN_NOT_REDRIVABLE` for any other run.
   */
  async redrive(runId: string, by: string): Promise<ActiveRun> {
    const live = this.active.get(runId);
    if (live !== undefined)
      throw runNotRedrivable(runId, live.record.status, `it is ${live.record.status}`);
    const stored = await this.store.load(runId);
    if (stored === undefined) throw runNotFound(runId);
    const { nodes } = storedDirective(this.loader, stored).compiled;
    const next = redrivenRun(stored, nodes, { by, at: Date.now() });
    const entry = next.record.redrives!.at(-1)!;
    this.observer?.runRedriven?.(runId, entry);
    for (const step of entry.steps)
      this.observer?.stepStarted?.(runId, step, next.steps[step]!.attempts);
    return this.restore(runId, next, true);
  }

  /**
   * The active run, or the stored one restored into this process: a waiting one, or with
   * `interrupted` also a running one, whose interrupted work is restarted.
   */
  private async attach(runId: string, interrupted = false): Promise<ActiveRun> {
    const live = this.active.get(runId);
    if (live) return live;
    const stored = await this.store.load(runId);
    if (stored === undefined) throw runNotFound(runId);
    return this.restore(runId, stored, interrupted);
  }

  /** {@link attach} of a run as `stored` holds it (its child runs as the store holds them). */
  private async restore(
    runId: string,
    stored: StoredRun,
    interrupted: boolean,
  ): Promise<ActiveRun> {
    const children = await Promise.all(
      Object.entries(stored.children).map(
        async ([node, childId]) => [node, childId, await this.store.load(childId)] as const,
      ),
    );
    const run = restoredRun(this, this.loader, runId, stored, interrupted);
    this.register(run);
    run.begin();
    if (interrupted) {
      // A child noted but never stored (the worker stopped before its first write) is started
      // again by its step, under the same id.
      for (const [node, , child] of children)
        if (child === undefined && run.steps[node]?.status === 'running') run.forgetChild(node);
      run.restartInterrupted();
      run.effects.releaseHolds();
    }
    for (const [node, childId, child] of children) {
      const resumable =
        child?.record.status === 'waiting' ||
        child?.record.status === 'paused' ||
        (interrupted && child?.record.status === 'running');
      if (resumable) run.adoptChild(node, await this.attach(childId, interrupted));
      // A child that ended while the parent's process was down: its outcome settles the step.
      else if (interrupted && child && run.steps[node]?.status === 'running')
        run.adoptChild(node, child.record);
    }
    return run;
  }

  /** Whether the run, or a child run of it, has a step waiting for signal `name`. */
  waitsFor(run: ActiveRun, name: string): boolean {
    return findWaiter(run, name, this.live) !== undefined;
  }
}
