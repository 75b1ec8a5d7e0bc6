/**
 * Compensation (a saga): when a run fails or is cancelled after steps that declare `<compensate>`
 * completed, the machine goes to `compensating` instead of ending, and the engine runs their
 * compensations here, one at a time, in reverse order of completion, then tells the machine
 * (`compensated`), which ends the run.
 *
 * What to undo is in the machine's context (`undo`: each such step's result, noted when it
 * completed), stored with the snapshot. Each compensation is recorded like a step, under the name
 * `compensate:NAME`: a step record (its attempts, retries, deadline, result or error), an entry in
 * the run record when it ends, `step.started`/`step.ended` on the feed, a span per attempt. Those
 * entries are also what a resumed run reads to know how far it got: the compensations that ended
 * are the first ones of the walk, so it goes on with the next; one under way when its process
 * stopped goes on under its stored record (its attempt, its deadline, its retry time), and its
 * calls, whose ids are derived from the run, the compensation's entry and its try, find the calls
 * made before. A compensation that fails for good does not stop the others; the run then ends
 * `failed` with `COMPENSATION_FAILED`, keeping its first error as the cause.
 */
import type { Actor } from 'xstate';
import type { CompiledNode } from '../compiler/compiled-directive.js';
import type { RunMachine } from '../compiler/machine-logic.js';
import type {
  RunContext,
  RunError,
  RunEvent,
  StepDoneEvent,
  StepFailedEvent,
  UndoEntry,
} from '../compiler/run-context.js';
import { scopeOf, type RunData } from '../compiler/settle.js';
import type { Compensation, StepNode } from '../directive/ast.js';
import { COMPENSATE_PREFIX, compensationName } from '../directive/process-node.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { Scope } from '../expr/scope.js';
import { childOutcome } from './child-outcome.js';
import { executeAction, type ExecutingRun } from './execute-action.js';
import type { LinkedRun } from './linked-run.js';
import { runAttempts, type AttemptOutcome } from './run-attempts.js';
import type { RunLifecycle } from './run-lifecycle.js';
import type { RunRecord } from './run-record.js';
import type { StepBook } from './step-book.js';
import type { StepTry, StepWork } from './step-work.js';

/** What compensating reads and calls on its run (an {@link ActiveRun}). */
export interface CompensatingRun extends ExecutingRun {
  readonly record: RunRecord;
  /** Child runs started by this run, by the step (or compensation) that started them. */
  readonly children: Record<string, string>;
  readonly book: StepBook;
  readonly work: StepWork;
  readonly data: RunData;
  readonly lifecycle: Pick<RunLifecycle, 'checkpoint'>;
  readonly actor: Pick<Actor<RunMachine>, 'getSnapshot'>;
  /** The compiled node of a step. */
  node(name: string): CompiledNode;
  /** Sends an event to the machine, while it runs. */
  send(event: RunEvent): void;
}

/** A compensation that failed for good, as the run's error lists it. */
type Failure = NonNullable<RunError['compensations']>[number];

/** Runs a run's compensations (see the module comment). */
export class Compensations {
  private walking = false;
  /** Child runs of compensations, adopted by a resumed run (see {@link adopt}). */
  private readonly adopted = new Map<string, Deferred<LinkedRun | RunRecord>>();

  constructor(private readonly run: CompensatingRun) {}

  /**
   * The machine is in `compensating` (it entered it, or a run restored there begins): run what is
   * left to undo, once this transition (and the recording of the steps it stopped) is over.
   */
  begin(): void {
    if (this.walking) return;
    this.walking = true;
    void Promise.resolve()
      .then(() => this.walk())
      .catch((err: unknown) => {
        // Not a compensation's failure (those are outcomes): a bug. The run must still end.
        const e = DirigentError.from(err);
        this.run.send({
          type: 'compensated',
          error: { code: ErrorCode.INTERNAL, message: e.message, step: null },
        });
      });
  }

  /**
   * A resumed run takes up the child run that compensation `name` had started (live again, or
   * the record of one that ended while no process drove this run): its outcome is the outcome of
   * the compensation's interrupted try.
   */
  adopt(name: string, child: LinkedRun | RunRecord): void {
    this.deferred(name).resolve(child);
  }

  private async walk(): Promise<void> {
    const run = this.run;
    const context = run.actor.getSnapshot().context;
    const undo = context.undo ?? [];
    // A resumed run: the compensations that ended are the first of the walk.
    const failures: Failure[] = [];
    let ended = 0;
    for (const e of run.record.steps) {
      if (!e.name.startsWith(COMPENSATE_PREFIX)) continue;
      ended++;
      if (e.status === 'failed')
        failures.push({
          step: e.name,
          code: e.error?.code ?? ErrorCode.INTERNAL,
          message: e.error?.message ?? '',
        });
    }
    for (let k = ended; k < undo.length; k++) {
      const entry = undo[undo.length - 1 - k]!;
      const outcome = await this.undoOne(entry, k, context);
      if (outcome === undefined) return; // this process let the run go
      if (!outcome.ok)
        failures.push({
          step: compensationName(entry.step),
          code: outcome.error.code,
          message: outcome.error.message,
        });
    }
    run.send(
      failures.length === 0
        ? { type: 'compensated' }
        : { type: 'compensated', error: compensationFailed(context.runError, failures) },
    );
  }

  /**
   * Runs the compensation of `entry`, the `k`-th of the walk (0 first), under its record, and
   * records how it ended; undefined when this process let the run go meanwhile.
   */
  private async undoOne(
    entry: UndoEntry,
    k: number,
    context: RunContext,
  ): Promise<AttemptOutcome<unknown> | undefined> {
    const run = this.run;
    const step = run.node(entry.step).node as StepNode;
    const comp = step.compensate!;
    const name = compensationName(entry.step);
    // After every entry of a step, and one of its own for each compensation: a looped step
    // undone twice makes calls and spans of distinct ids.
    const seq = run.book.counters.transitions + 1 + k;
    const stored = run.steps[name];
    const resumed = stored?.status === 'running' && stored.seq === seq;
    if (resumed) run.work.repeat(name);
    else {
      run.book.stepStarted(name).seq = seq;
      run.host.observer?.stepStarted?.(run.runId, name, 1);
      if (run.host.durable) run.lifecycle.checkpoint();
    }
    const scope: Scope = {
      ...scopeOf(context, run.data, entry.result),
      // What the compensation answers: why the run is being undone.
      error: context.runError && { ...context.runError, retryable: false },
    };
    const child =
      resumed && run.children[name] !== undefined ? this.deferred(name).promise : undefined;
    const controller = new AbortController();
    const work: StepTry =
      entry.items === undefined
        ? (attempt, signal) =>
            child !== undefined && attempt === stored!.attempts
              ? child.then(childOutcome)
              : executeAction(run, comp.execute, scope, name, attempt, signal)
        : (_attempt, signal) => this.undoItems(step, comp, entry, scope, name, signal);
    // A foreach's items retry one by one (as its items ran), the whole only once.
    const policy = entry.items === undefined ? (comp.retry ?? this.toolPolicy(comp)) : undefined;
    const unit = entry.items === undefined ? comp : { timeoutMs: undefined, loc: comp.loc };
    const tries = run.work.tries(name, unit, work, policy, controller.signal);
    // Under way like a step's work: a compensation's child that waits makes the run wait.
    run.work.inflight.set(name, { controller, done: tries.then(() => undefined) });
    const outcome = await tries;
    run.work.inflight.delete(name);
    run.work.endRepeat(name);
    this.adopted.delete(name);
    if (run.work.isReleased) return undefined;
    run.book.stepEnded(endEvent(name, outcome, comp), name);
    if (run.host.durable) run.lifecycle.checkpoint();
    return outcome;
  }

  /**
   * The compensation of a foreach step: once per item that completed, last item first, each tried
   * under the compensation's `<retry>` (or its tool's policy) with the item's result as `result`
   * and the foreach's variables in scope. An item that cannot be undone does not stop the others;
   * the compensation then fails with the first such error. Its result lists each item's outcome
   * in the order the items ran.
   */
  private async undoItems(
    step: StepNode,
    comp: Compensation,
    entry: UndoEntry,
    scope: Scope,
    name: string,
    signal: AbortSignal,
  ): Promise<unknown[]> {
    const as = step.action.type === 'foreach' ? step.action.as : 'item';
    const items = entry.items ?? [];
    const results = Array.isArray(entry.result) ? entry.result : [];
    const policy = comp.retry ?? this.toolPolicy(comp);
    const out: unknown[] = new Array(items.length);
    const failed: { index: number; error: DirigentError }[] = [];
    for (let i = items.length - 1; i >= 0; i--) {
      const { index, item } = items[i]!;
      const vars = { [as]: item, [`${as}_index`]: index };
      const itemScope: Scope = { ...scope, result: results[index], vars };
      const outcome = await runAttempts(
        (n, s) => executeAction(this.run, comp.execute, itemScope, name, n, s, index),
        { policy, signal, timeoutMs: comp.timeoutMs },
      );
      if (signal.aborted) throw signal.reason;
      if (outcome.ok) out[i] = outcome.value;
      else {
        out[i] = { error: { code: outcome.error.code, message: outcome.error.message } };
        failed.unshift({ index, error: outcome.error });
      }
    }
    const first = failed[0];
    if (first === undefined) return out;
    throw new DirigentError(
      first.error.code as ErrorCode,
      `${failed.length} of ${items.length} items could not be undone (item ${first.index}: ${first.error.message})`,
      {
        ...(first.error.location !== undefined && { location: first.error.location }),
        details: { items: failed.map((f) => ({ index: f.index, code: f.error.code })) },
      },
    );
  }

  /** The tool's own retry policy, when its id is known before the compensation runs. */
  private toolPolicy(comp: Compensation) {
    const { itemType, itemId } = comp.execute;
    if (itemType !== 'tool' || itemId.includes('{')) return undefined;
    return this.run.host.dispatcher.describe(itemId)?.retry;
  }

  private deferred(name: string): Deferred<LinkedRun | RunRecord> {
    let d = this.adopted.get(name);
    if (d === undefined) this.adopted.set(name, (d = deferred()));
    return d;
  }
}

/** How a compensation ended, as the event its step book records. */
function endEvent(
  name: string,
  outcome: AttemptOutcome<unknown>,
  comp: Compensation,
): StepDoneEvent | StepFailedEvent {
  if (outcome.ok) return { type: `done:${name}`, result: outcome.value, assigned: null, edge: 0 };
  const error = outcome.error.toJSON();
  error.location ??= comp.loc;
  return { type: `fail:${name}`, error };
}

/** The error of a run whose compensations (`failures`) failed for good after `cause`. */
export function compensationFailed(cause: RunError | null, failures: Failure[]): RunError {
  const first = failures[0]!;
  const why =
    cause === null
      ? 'The run ended'
      : cause.code === ErrorCode.CANCELLED && cause.step === null
        ? 'The run was cancelled'
        : `The run failed${cause.step !== null ? ` at step "${cause.step}"` : ''} (${cause.code}: ${cause.message})`;
  const what =
    failures.length === 1
      ? `compensation "${first.step}" failed for good (${first.code}: ${first.message})`
      : `${failures.length} compensations failed for good, first "${first.step}" (${first.code}: ${first.message})`;
  return {
    code: ErrorCode.COMPENSATION_FAILED,
    message: `${why}, and ${what}.`,
    step: first.step,
    ...(cause !== null && { cause }),
    compensations: failures,
  };
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
