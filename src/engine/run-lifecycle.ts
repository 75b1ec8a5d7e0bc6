/**
 * The life of a run record: running, waiting, ended. The record is stored at each of those points
 * before anyone waiting on the run hears of it, and between them, in checkpoints that gather the
 * transitions of a few milliseconds into one write (a durable host's, see `RunHost.durable`).
 */
import type { RunContext } from '../compiler/run-context.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { RunHost } from './run-host.js';
import { hasEnded, type RunRecord, type WaitingStep } from './run-record.js';

type Waiter = (record: RunRecord) => void;

/** How long the transitions of a durable run are gathered before they are stored in one write. */
export const CHECKPOINT_AFTER_MS = 20;

/** What a run's lifecycle needs of its host: where it reports, how it stores, its linked runs. */
export type LifecycleHost = Pick<RunHost, 'durable' | 'observer' | 'activeRun' | 'unregister'>;

/** What a run's lifecycle asks of the rest of its run. */
export interface LifecycleHooks {
  /** The run that started this one as a child: it waits through this one, and hears of it. */
  readonly parentRunId: string | null;
  /** The steps the run waits on, or undefined while work is under way. */
  waitingSteps(): WaitingStep[] | undefined;
  /** The steps the run holds, its directive paused. */
  heldSteps(): string[];
  /** The declared outputs, evaluated when the run completes. */
  outputs(context: RunContext): Record<string, unknown>;
  /** Writes the run to the store. */
  store(): Promise<void>;
  /** The run has just ended (its record says how): for its telemetry. */
  ended(): void;
}

/** A run record's life cycle and its writes (see the module comment). */
export class RunLifecycle {
  private waiters: Waiter[] = [];
  private enders: Waiter[] = [];
  /** The latest store write; settled() resolves only after it. */
  private stored: Promise<void> = Promise.resolve();
  private idleCheckQueued = false;
  /** A checkpoint due soon (see {@link checkpointSoon}), or promptly (see {@link storePromptly}). */
  private soon: NodeJS.Timeout | undefined;
  private prompt = false;
  /** Let go by this process: another may be driving the run already (see {@link release}). */
  private released = false;

  constructor(
    readonly record: RunRecord,
    private readonly host: LifecycleHost,
    private readonly hooks: LifecycleHooks,
  ) {}

  /** Resolves when the run ends or waits for a signal, once that state is stored. */
  settled(): Promise<RunRecord> {
    if (this.record.status !== 'running') return this.stored.then(() => this.record);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Resolves once every store write made so far (and one due soon) has completed. */
  persisted(): Promise<void> {
    this.flushSoon();
    return this.stored;
  }

  /** Resolves when the run ends (completed, failed or cancelled), however long it waits. */
  finished(): Promise<RunRecord> {
    if (this.isOver()) return this.stored.then(() => this.record);
    return new Promise((resolve) => this.enders.push(resolve));
  }

  /** Marks this run (and the parents waiting through it) as running again. */
  resumeRunning(): void {
    if (this.record.status !== 'waiting' && this.record.status !== 'paused') return;
    this.record.status = 'running';
    delete this.record.waiting;
    const parent = this.hooks.parentRunId;
    if (parent !== null) this.host.activeRun(parent)?.resumeRunning();
  }

  /** Soon after the current event: does the run now only wait for signals? */
  queueIdleCheck(): void {
    if (this.idleCheckQueued) return;
    this.idleCheckQueued = true;
    queueMicrotask(() => {
      this.idleCheckQueued = false;
      if (this.record.status !== 'running') return;
      const waiting = this.hooks.waitingSteps();
      if (waiting === undefined) return;
      // Nothing under way: held steps make it paused (a signal may still come for a wait).
      const held = this.hooks.heldSteps();
      if (held.length > 0) {
        this.record.status = 'paused';
        if (waiting.length > 0) this.record.waiting = waiting;
        this.host.observer?.runPaused?.(this.record.runId, held);
        this.save();
        return;
      }
      if (waiting.length === 0) return;
      this.record.status = 'waiting';
      this.record.waiting = waiting;
      this.host.observer?.runWaiting?.(this.record.runId, waiting);
      this.save();
    });
  }

  /** The machine reached the final state `final`: record the outcome and the outputs. */
  end(final: string, context: RunContext): void {
    const status =
      final === 'completed' ? 'completed' : final === 'cancelled' ? 'cancelled' : 'failed';
    this.record.status = status;
    this.record.endedAt = Date.now();
    delete this.record.waiting;
    if (status === 'completed') {
      try {
        this.record.outputs = this.hooks.outputs(context);
      } catch (err) {
        const e = DirigentError.from(err);
        this.record.status = 'failed';
        this.record.error = {
          code: e.code,
          message: `An output could not be computed: ${e.message}`,
          step: null,
        };
      }
    } else {
      this.record.error = context.runError ?? {
        code: ErrorCode.INTERNAL,
        message: 'The run failed.',
        step: null,
      };
    }
    this.hooks.ended();
    this.host.observer?.runEnded?.(this.record);
    this.save();
  }

  /** The machine itself failed (a bug, not a step): the run fails with `INTERNAL`. */
  crash(err: unknown): void {
    const e = DirigentError.from(err);
    this.record.status = 'failed';
    this.record.endedAt = Date.now();
    this.record.error = {
      code: ErrorCode.INTERNAL,
      message: `The run's state machine failed: ${e.message}`,
      step: null,
    };
    this.hooks.ended();
    this.save();
  }

  /**
   * Stores the run within {@link CHECKPOINT_AFTER_MS}, in one write for every transition made
   * meanwhile (a durable engine does after each): a run whose steps end faster than that is written
   * a few times rather than once per step, and a one-step run once, when it ends. What a lost write
   * leaves out is not lost: the run, resumed from its previous write, makes the same calls again and
   * finds their jobs and outcomes (see `redis/run-worker/queue-dispatcher.ts`).
   */
  checkpointSoon(): void {
    if (this.soon === undefined) this.checkpointIn(CHECKPOINT_AFTER_MS);
  }

  /**
   * Stores the run as soon as the current transition is over (within a millisecond or so, in one
   * write for whatever else happens meanwhile), for an outcome no one else keeps: a call made in
   * process. A run that ends or waits meanwhile is stored by that write alone.
   */
  storePromptly(): void {
    if (this.host.durable && !this.prompt) this.checkpointIn(0);
  }

  /**
   * Stores the run as it is now, telling no one (what a resumed run needs at once: a deadline).
   * A run let go writes no more checkpoints: another process may be driving it already.
   */
  checkpoint(): void {
    this.cancelSoon();
    if (this.released) return;
    this.stored = this.stored
      .then(() => this.hooks.store())
      .catch((err: unknown) =>
        this.host.observer?.storeFailed?.(this.record.runId, DirigentError.from(err)),
      );
  }

  /** This process lets the run go: what it did up to now is stored, and no checkpoint after. */
  release(): void {
    // A write another worker fenced (it claimed the run meanwhile) is refused by the store.
    this.flushSoon();
    this.released = true;
  }

  /**
   * Stores the run, then tells whoever waits for it; a store failure is reported, not swallowed.
   * Writes are chained, so a store sees them in the order they were made.
   */
  private save(): void {
    this.cancelSoon();
    this.stored = this.stored
      .then(() => this.hooks.store())
      .then(
        () => this.notify(),
        (err: unknown) => {
          this.host.observer?.storeFailed?.(this.record.runId, DirigentError.from(err));
          this.notify();
        },
      );
  }

  private checkpointIn(ms: number): void {
    this.cancelSoon();
    this.prompt = ms === 0;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      this.checkpoint();
    }, ms);
    this.soon.unref();
  }

  /** Stores now what {@link checkpointSoon} would have stored soon, if anything. */
  private flushSoon(): void {
    if (this.soon !== undefined) this.checkpoint();
  }

  private cancelSoon(): void {
    this.prompt = false;
    if (this.soon === undefined) return;
    clearTimeout(this.soon);
    this.soon = undefined;
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w(this.record);
    if (this.isOver()) {
      const enders = this.enders;
      this.enders = [];
      for (const e of enders) e(this.record);
      this.host.unregister(this.record.runId);
    }
    const parent = this.hooks.parentRunId;
    if (this.record.status === 'waiting' && parent !== null)
      this.host.activeRun(parent)?.queueIdleCheck();
  }

  private isOver(): boolean {
    return hasEnded(this.record.status);
  }
}
