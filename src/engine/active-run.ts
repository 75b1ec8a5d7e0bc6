/**
 * One run in this process: a live xstate actor plus the work its steps have under way. The
 * machine routes; this class performs the effects it names and feeds outcomes back as events.
 * The path of a step: the machine enters it and calls {@link ActiveRun.startStep}, which checks
 * its limits and condition and dispatches it ({@link dispatchStep}: a tool call, a child
 * directive, a foreach, a wait…); its work's outcome settles it ({@link StepWork.settleStep},
 * which chooses the edge) or fails it; the machine takes that edge, `stepEnded` records the step
 * ({@link StepBook}) and `startStep` starts the next. The record's life (running, waiting,
 * ended, stored) is {@link RunTracker}'s.
 */
import type * as Xstate from 'xstate';
import type { Actor } from 'xstate';
import type { RunMachine } from '../compiler/machine-logic.js';
import type { RunContext, RunEvent } from '../compiler/run-context.js';
import { scopeOf, settleSkipped } from '../compiler/settle.js';
import { ErrorCode } from '../errors/error-codes.js';
import { evaluateCondition } from '../expr/condition.js';
import type { RunTrace } from '../telemetry/run-trace.js';
import { childOutcome } from './child-outcome.js';
import type { LoadedDirective } from './directive-loader.js';
import { dispatchStep } from './dispatch-step.js';
import { ENGINE_DEFAULTS } from './engine-options.js';
import type { LinkedRun } from './linked-run.js';
import type { RunHost } from './run-host.js';
import type { RunLineage } from './run-lineage.js';
import { runOutputs } from './run-outputs.js';
import type { RunRecord, WaitingStep } from './run-record.js';
import { RunSpans } from './run-spans.js';
import type { RunStart } from './run-start.js';
import { secretNames } from './secret-names.js';
import { StepWork } from './step-work.js';
import { lazyPackage } from '../directive/lazy-package.js';

// Required, not imported: an import of xstate's CommonJS build scans its text for exports first.
const { createActor } = lazyPackage<typeof Xstate>('xstate')();

export type { RunLineage } from './run-lineage.js';
export type { RunStart } from './run-start.js';

/** A run live in this process (see the module comment). */
export class ActiveRun extends StepWork {
  /** The live actor of the directive's compiled machine. */
  readonly actor: Actor<RunMachine>;
  /** Child runs started by this run, by the step that started them. */
  readonly children: Record<string, string>;
  private runTimer: NodeJS.Timeout | undefined;
  /** The snapshot when the run was let go. */
  private heldSnapshot: unknown;
  /** The run's place in a trace (kept and stored even where this process records no telemetry). */
  readonly trace: RunTrace | undefined;
  /** Content hashes of the tools the run's submitter resolved; each call carries its tool's. */
  readonly toolHashes: Record<string, string> | undefined;

  constructor(
    host: RunHost,
    loaded: LoadedDirective,
    readonly lineage: RunLineage,
    runId: string,
    start: RunStart,
  ) {
    const stored = 'stored' in start ? start.stored : undefined;
    super(
      host,
      loaded,
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

  /** The directive the run follows. */
  get directive() {
    return this.loaded.compiled.directive;
  }

  /** The secrets the directive declares: tool parameters leave their values to the dispatcher. */
  get secretNames(): ReadonlySet<string> {
    return secretNames(this.loaded.compiled.directive);
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

  /** Sends an event to the machine, while it runs. */
  send(event: RunEvent): void {
    if (this.actor.getSnapshot().status === 'active') this.actor.send(event);
  }

  /** Delivers a signal to the step waiting for it; false when none waits for `name`. */
  deliver(name: string, payload: unknown): boolean {
    const w = this.waiting.take(name);
    if (w === undefined) return false;
    this.resumeRunning();
    this.settleStep(this.node(w.step), this.actor.getSnapshot().context, payload);
    return true;
  }

  /** Links a restored child run (or the record of one that ended) to the step that started it. */
  adoptChild(node: string, child: LinkedRun | RunRecord): void {
    const cn = this.node(node);
    if (cn.node.kind === 'step')
      this.workStep(cn, cn.node, () => childOutcome(child), undefined, undefined);
  }

  /** Records the child run a step started (stored at once by a durable engine, for resuming). */
  noteChild(node: string, childId: string): void {
    this.children[node] = childId;
    if (this.host.durable) this.checkpoint();
  }

  /** Forgets the child a step noted but that was never stored: the step starts it again. */
  forgetChild(node: string): void {
    delete this.children[node];
    this.counters.spawns--; // counted again when it starts
  }

  /** The step's call runs in this process (see `StepRecord.runsOn`); stored with the next write. */
  callRunsHere(node: string, worker: string): void {
    const rec = this.steps[node];
    if (rec === undefined) return;
    rec.runsOn = worker;
    this.checkpointSoon();
  }

  /** Counts one more child run against `limit`; false when the limit is reached. */
  reserveSpawn(limit: number): boolean {
    if (this.counters.spawns >= limit) return false;
    this.counters.spawns++;
    return true;
  }

  /** Cancels the run: the machine stops its steps and ends `cancelled`. */
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
      this.settleStep(cn, context, { branches });
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
      dispatchStep(this, cn, step, context);
    } catch (err) {
      this.failStep(cn, err);
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
        dispatchStep(this, cn, cn.node, context);
      } catch (err) {
        this.failStep(cn, err);
      }
    }
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
    if (this.host.durable && this.record.status === 'running') this.checkpointSoon();
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
    this.flushSoon(); // what it did up to now is stored (a write another worker fenced is refused)
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
