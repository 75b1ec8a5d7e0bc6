/**
 * One run in this process: a live xstate actor and the parts that do what its machine names. The
 * machine only routes; the parts perform its effects and feed the outcomes back as events.
 *
 * - {@link RunLifecycle} (`lifecycle`): the record's life, running, waiting, ended, each stored
 *   before whoever waits on the run hears of it, and checkpoints between.
 * - {@link StepBook} (`book`): the step records, the counters, and the step entries in the order
 *   steps ended.
 * - {@link StepWork} (`work`): the work steps have under way, tried under retries and timeouts,
 *   then settled (choosing the edge) or failed; stopped when the machine leaves the step.
 * - {@link StepWaits} (`waiting`): the steps waiting for a signal, with their deadlines.
 * - {@link MachineEffects} (`effects`): what each effect the machine names does with those parts.
 * - {@link Compensations} (`compensations`): a failed or cancelled run's compensations, run in
 *   reverse order of the steps they undo before the run ends.
 *
 * The path of a step: the machine enters it and calls `effects.startStep`, which checks its limits
 * and condition and dispatches it ({@link dispatchStep}: a tool call, a child directive, a foreach,
 * a wait…); its work's outcome settles or fails it; the machine takes the edge, `stepEnded` writes
 * the step into the book and `startStep` starts the next. The run itself holds what ties the parts
 * together: the actor, its snapshots, the run's time limit, its child runs, and letting it go.
 */
import type * as Xstate from 'xstate';
import type { Actor } from 'xstate';
import type { CompiledNode } from '../compiler/compiled-directive.js';
import type { RunMachine } from '../compiler/machine-logic.js';
import type { RunContext, RunEvent, StepRecord, UndoItem } from '../compiler/run-context.js';
import type { RunData } from '../compiler/settle.js';
import type { StepNode } from '../directive/ast.js';
import { COMPENSATE_PREFIX } from '../directive/process-node.js';
import { lazyPackage } from '../lazy-package.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { withSecretMarks } from '../policy/run-environment.js';
import type { RunTrace } from '../telemetry/run-trace.js';
import { childOutcome } from './child-outcome.js';
import { Compensations } from './compensations.js';
import type { LoadedDirective } from './directive-loader.js';
import type { LinkedRun } from './linked-run.js';
import { MachineEffects } from './machine-effects.js';
import type { RunCounters } from './run-counters.js';
import type { RunHost } from './run-host.js';
import { RunLifecycle } from './run-lifecycle.js';
import type { RunLineage } from './run-lineage.js';
import { runOutputs } from './run-outputs.js';
import { clockStart, type RunRecord, type WaitingStep } from './run-record.js';
import { RunSpans } from './run-spans.js';
import type { RunStart } from './run-start.js';
import { inputsSummary } from './inputs-summary.js';
import { secretNames } from './secret-names.js';
import type { RerunSeed } from './rerun.js';
import { runConcurrencyOf, type RunConcurrency } from './run-concurrency.js';
import { StepBook, type StoredBook } from './step-book.js';
import { StepWaits } from './step-waits.js';
import { StepWork, type Inflight, type StepTry } from './step-work.js';

// Required, not imported: an import of xstate's CommonJS build scans its text for exports first.
const { createActor } = lazyPackage<typeof Xstate>('xstate')();

export type { RunLineage } from './run-lineage.js';
export type { RunStart } from './run-start.js';

/** A run live in this process (see the module comment). */
export class ActiveRun {
  /** The run record: status, outputs, error, and the steps in the order they ended. */
  readonly record: RunRecord;
  /** The live actor of the directive's compiled machine. */
  readonly actor: Actor<RunMachine>;
  /** The record's life: running, waiting, ended, and when it is stored. */
  readonly lifecycle: RunLifecycle;
  /** Step records, counters and step entries. */
  readonly book: StepBook;
  /** The work the run's steps have under way. */
  readonly work: StepWork;
  /** Steps waiting for a signal. */
  readonly waiting: StepWaits;
  /** What the machine's effects do (the host provides them to the machine through this). */
  readonly effects: MachineEffects;
  /** The compensations of the run, should it fail or be cancelled. */
  readonly compensations: Compensations;
  /** What the run's templates, conditions and expressions read, apart from the machine context. */
  readonly data: RunData;
  /** The run's spans and metrics, when the engine records telemetry. */
  readonly spans: RunSpans | undefined;
  /** The run's place in a trace (kept and stored even where this process records no telemetry). */
  readonly trace: RunTrace | undefined;
  /** Child runs started by this run, by the step that started them. */
  readonly children: Record<string, string>;
  /** Content hashes of the tools the run's submitter resolved; each call carries its tool's. */
  readonly toolHashes: Record<string, string> | undefined;
  /** Told when the run may have become parkable (a step started waiting to retry; see parkable.ts). */
  onParkable: (() => void) | undefined;
  private runTimer: NodeJS.Timeout | undefined;
  /** The snapshot when the run was let go. */
  private heldSnapshot: unknown;
  /** The machine's latest snapshot in its steps (not compensating, not ended): see {@link redrivePoint}. */
  private inSteps: ReturnType<Actor<RunMachine>['getSnapshot']> | undefined;
  /** {@link redrivePoint}, once serialised (or as a restored run had it stored). */
  private point: unknown;
  /** Whether the machine has left its steps: it compensates, or has ended. */
  private stepsLeft = false;

  constructor(
    readonly host: RunHost,
    readonly loaded: LoadedDirective,
    readonly lineage: RunLineage,
    runId: string,
    start: RunStart,
  ) {
    const stored = 'stored' in start ? start.stored : undefined;
    const seed = 'from' in start ? start.from : undefined;
    this.record = stored?.record ?? {
      runId,
      directive: loaded.itemId,
      status: 'running',
      outputs: null,
      steps: [],
      error: null,
      startedAt: Date.now(),
      endedAt: null,
      ...('tags' in start && start.tags && { tags: start.tags }),
      ...summaryOf(start),
      ...(seed && { rerunOf: seed.of }),
      ...concurrencyOf(loaded, start),
    };
    this.children = { ...stored?.children };
    this.point = stored?.redrivePoint;
    this.toolHashes = stored?.tools ?? ('tools' in start ? start.tools : undefined);
    const t = host.telemetry;
    this.trace =
      stored?.trace ??
      ('trace' in start ? start.trace : undefined) ??
      t?.newRunTrace(runId, 'trigger' in start ? start.trigger : 'library');
    this.spans =
      t !== undefined && this.trace !== undefined ? new RunSpans(t, this.trace, this) : undefined;
    this.book = new StepBook(this.record, host.observer, this.spans, stored ?? seededBook(seed));
    this.data = {
      steps: this.book.steps,
      env: withSecretMarks(host.env, loaded.compiled.directive.secrets),
    };
    this.lifecycle = new RunLifecycle(this.record, host, {
      parentRunId: lineage.parentRunId,
      waitingSteps: () => this.waitingSteps(),
      heldSteps: () =>
        Object.entries(this.book.steps)
          .filter(([, rec]) => rec.held === true)
          .map(([name]) => name),
      outputs: (context) => runOutputs(this.directive, context, this.data),
      store: () => host.persist(this),
      ended: () => this.spans?.ended(this.actor.getSnapshot().context.inputs),
    });
    this.work = new StepWork(this);
    this.waiting = new StepWaits((w) =>
      this.work.failStep(
        this.node(w.step),
        DirigentError.fatal(
          ErrorCode.WAIT_TIMEOUT,
          `Step "${w.step}" waited longer than its timeout for signal "${w.signal}".`,
        ),
      ),
    );
    this.effects = new MachineEffects(this);
    this.compensations = new Compensations(this);
    const machine = host.providedMachine(loaded.compiled.machine);
    const inputs = 'inputs' in start ? start.inputs : {};
    const snapshot = stored?.snapshot ?? (seed && seededSnapshot(loaded, seed, inputs));
    this.actor =
      snapshot !== undefined
        ? createActor(machine, { snapshot: snapshot as never, input: { inputs: {} } })
        : createActor(machine, { input: { inputs } });
    if (stored === undefined) this.spans?.started();
    this.actor.subscribe({
      next: () => this.onSnapshot(),
      error: (err) => this.lifecycle.crash(err),
    });
  }

  get runId(): string {
    return this.record.runId;
  }

  /** The directive the run follows. */
  get directive() {
    return this.loaded.compiled.directive;
  }

  /** The secrets the directive declares: tool parameters leave their values to the dispatcher. */
  get secretNames(): ReadonlySet<string> {
    return secretNames(this.loaded.compiled.directive);
  }

  /** True while this run waits for a signal, itself or through a child directive. */
  get isWaiting(): boolean {
    return this.record.status === 'waiting';
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
      const remaining = clockStart(this.record) + seconds * 1000 - Date.now();
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
    // Restored while compensating: what is left to undo goes on (entry actions do not run again).
    if (this.actor.getSnapshot().matches('compensating' as never)) this.compensations.begin();
    this.lifecycle.queueIdleCheck();
  }

  /** Sends an event to the machine, while it runs. */
  send(event: RunEvent): void {
    if (this.actor.getSnapshot().status === 'active') this.actor.send(event);
  }

  /** Delivers a signal to the step waiting for it; false when none waits for `name`. */
  deliver(name: string, payload: unknown): boolean {
    const w = this.waiting.take(name);
    if (w === undefined) return false;
    this.lifecycle.resumeRunning();
    this.work.settleStep(this.node(w.step), this.actor.getSnapshot().context, payload);
    return true;
  }

  /**
   * Cancels the run: the machine stops its steps and ends `cancelled`, after the compensations of
   * its completed steps unless `compensate` is false. A run compensating already goes on.
   */
  cancel(reason?: string, compensate = true): void {
    this.send({
      type: 'run.cancel',
      ...(reason !== undefined && { reason }),
      ...(!compensate && { compensate: false as const }),
    });
  }

  /** The compiled node of a step or block. */
  node(name: string): CompiledNode {
    const cn = this.loaded.compiled.nodes.get(name);
    if (cn === undefined) throw new DirigentError(ErrorCode.INTERNAL, `Unknown node "${name}".`);
    return cn;
  }

  /** Dispatches again the steps a resumed run had under way (see {@link MachineEffects}). */
  restartInterrupted(): void {
    this.effects.restartInterrupted();
  }

  /** Whether this process let the run go (see {@link release}): it goes on elsewhere. */
  get isReleased(): boolean {
    return this.work.isReleased;
  }

  /**
   * Stops timers so the process can exit; a waiting run lives on in the store. Calls under way
   * are left to finish (a process that resumes the run takes their results), but no step starts
   * another attempt here, and the run stores nothing more but what it did up to now.
   */
  release(): void {
    this.lifecycle.release();
    this.work.release();
    this.heldSnapshot = this.actor.getPersistedSnapshot();
    if (this.runTimer) clearTimeout(this.runTimer);
    this.waiting.release();
    this.actor.stop();
  }

  /**
   * Of a run that failed or was cancelled, or compensates, the snapshot from just before: in the
   * steps that failed or were under way (see `redrive.ts`). Undefined while the run is in its
   * steps, and once it has completed.
   */
  redrivePoint(): unknown {
    if (this.record.status === 'completed' || !this.stepsLeft) return undefined;
    if (this.point === undefined && this.inSteps !== undefined)
      this.point = this.actor.logic.getPersistedSnapshot(this.inSteps);
    return this.point;
  }

  /**
   * The machine's snapshot to store: as it stands, or, once the run is let go, as it stood then (a
   * store write still under way must not record the stopped actor, which would never run again).
   */
  persistedSnapshot(): unknown {
    return this.heldSnapshot ?? this.actor.getPersistedSnapshot();
  }

  // ---- child runs ----

  /** Links a restored child run (or the record of one that ended) to the step that started it. */
  adoptChild(node: string, child: LinkedRun | RunRecord): void {
    if (node.startsWith(COMPENSATE_PREFIX)) {
      this.compensations.adopt(node, child);
      return;
    }
    const cn = this.node(node);
    if (cn.node.kind === 'step')
      this.work.workStep(cn, cn.node, () => childOutcome(child), undefined, undefined);
  }

  /** Records the child run a step started (stored at once by a durable engine, for resuming). */
  noteChild(node: string, childId: string): void {
    this.children[node] = childId;
    if (this.host.durable) this.lifecycle.checkpoint();
  }

  /** Forgets the child a step noted but that was never stored: the step starts it again. */
  forgetChild(node: string): void {
    delete this.children[node];
    this.book.counters.spawns--; // counted again when it starts
  }

  /** Counts one more child run against `limit`; false when the limit is reached. */
  reserveSpawn(limit: number): boolean {
    const counters = this.book.counters;
    if (counters.spawns >= limit) return false;
    counters.spawns++;
    return true;
  }

  // ---- what other modules ask of a run, answered by its parts ----

  /** Resolves when the run ends or waits for a signal, once that state is stored. */
  settled(): Promise<RunRecord> {
    return this.lifecycle.settled();
  }

  /** Resolves when the run ends (completed, failed or cancelled), however long it waits. */
  finished(): Promise<RunRecord> {
    return this.lifecycle.finished();
  }

  /** Resolves once every store write made so far (and one due soon) has completed. */
  persisted(): Promise<void> {
    return this.lifecycle.persisted();
  }

  /** Marks this run (and the parents waiting through it) as running again. */
  resumeRunning(): void {
    this.lifecycle.resumeRunning();
  }

  /** Soon after the current event: does the run now only wait for signals? */
  queueIdleCheck(): void {
    this.lifecycle.queueIdleCheck();
  }

  /** Stores the run as soon as the current transition is over (an in-process call ended). */
  storePromptly(): void {
    this.lifecycle.storePromptly();
  }

  /** The step's call runs in this process (see `StepRecord.runsOn`); stored with the next write. */
  callRunsHere(node: string, worker: string): void {
    const rec = this.book.steps[node];
    if (rec === undefined) return;
    rec.runsOn = worker;
    this.lifecycle.checkpointSoon();
  }

  /** Step records, beside the snapshot (see run-context.ts). */
  get steps(): Record<string, StepRecord> {
    return this.book.steps;
  }

  get counters(): RunCounters {
    return this.book.counters;
  }

  /** Work under way, by step. */
  get inflight(): ReadonlyMap<string, Inflight> {
    return this.work.inflight;
  }

  /** See {@link StepWork.workStep}. */
  workStep(
    cn: CompiledNode,
    step: StepNode,
    work: StepTry,
    policy: StepNode['retry'],
    collect: string | undefined,
    items?: () => UndoItem[],
  ): void {
    this.work.workStep(cn, step, work, policy, collect, items);
  }

  /** See {@link StepWork.settleStep}. */
  settleStep(cn: CompiledNode, context: RunContext, result: unknown, collect?: string): void {
    this.work.settleStep(cn, context, result, collect);
  }

  /** See {@link StepWork.settleStepWith}. */
  settleStepWith(cn: CompiledNode, make: () => RunEvent): void {
    this.work.settleStepWith(cn, make);
  }

  /** Whether the step's calls may repeat calls made before the run was resumed. */
  isRepeating(node: string): boolean {
    return this.work.isRepeating(node);
  }

  // ---- the actor's snapshots ----

  private onSnapshot(): void {
    this.book.flushStopped();
    const snap = this.actor.getSnapshot();
    // Kept as it is (snapshots are immutable); serialised only if the run fails or is cancelled.
    if (snap.status === 'active') {
      this.stepsLeft = snap.matches('compensating' as never);
      if (!this.stepsLeft) {
        this.inSteps = snap;
        this.point = undefined;
      }
    } else if (snap.status === 'done') this.stepsLeft = true;
    if (snap.status === 'done') {
      if (this.runTimer) clearTimeout(this.runTimer);
      this.lifecycle.end(snap.value as unknown as string, snap.context);
      return;
    }
    if (this.host.durable && this.record.status === 'running') this.lifecycle.checkpointSoon();
    // Only a wait, or a child run (which may wait), can leave the run waiting.
    if (this.waiting.size > 0 || this.book.counters.spawns > 0 || this.book.holding)
      this.lifecycle.queueIdleCheck();
  }

  /** The steps this run waits on, or undefined while real work is under way. */
  private waitingSteps(): WaitingStep[] | undefined {
    if (this.actor.getSnapshot().status !== 'active') return undefined;
    const nested: WaitingStep[] = [];
    // Work in flight is either real work or a child directive that itself waits.
    for (const node of this.work.inflight.keys()) {
      const childId = this.children[node];
      const child = childId === undefined ? undefined : this.host.activeRun(childId);
      if (!child?.isWaiting) return undefined; // real work under way
      nested.push(...(child.record.waiting ?? []).map((w) => ({ runId: child.runId, ...w })));
    }
    return [...this.waiting.values(), ...nested];
  }
}

/** The record's `summary` of a run started (not restored) with inputs. */
function summaryOf(start: RunStart): { summary?: string } {
  const summary = 'inputs' in start ? inputsSummary(start.inputs) : undefined;
  return summary === undefined ? {} : { summary };
}

/** The step book a rerun starts with: the earlier steps' records, and its first step running. */
function seededBook(seed: RerunSeed | undefined): StoredBook | undefined {
  if (seed === undefined) return undefined;
  const steps: Record<string, StepRecord> = {};
  for (const [name, rec] of Object.entries(seed.steps)) steps[name] = { ...rec };
  steps[seed.of.step] = {
    status: 'running',
    result: null,
    error: null,
    attempts: 1,
    startedAt: Date.now(),
    endedAt: null,
    seq: seed.seq,
  };
  return { steps, counters: { transitions: seed.seq, spawns: 0 } };
}

/** The machine's snapshot a rerun starts in: in its first step, with the state before it. */
function seededSnapshot(
  loaded: LoadedDirective,
  seed: RerunSeed,
  inputs: Record<string, unknown>,
): unknown {
  const { machine } = loaded.compiled;
  const context: RunContext = {
    inputs,
    state: seed.state,
    error: null,
    runError: null,
    returned: null,
    ...(seed.undo && { undo: seed.undo }),
  };
  return machine.getPersistedSnapshot(
    machine.resolveState({ value: { main: seed.of.step }, context } as never),
  );
}

/** A new run's concurrency key (see `run-concurrency.ts`), as its record keeps it. */
function concurrencyOf(loaded: LoadedDirective, start: RunStart): { concurrency?: RunConcurrency } {
  if (!('inputs' in start)) return {};
  const c = runConcurrencyOf(loaded.compiled.directive, start.inputs);
  return c === undefined ? {} : { concurrency: c };
}
