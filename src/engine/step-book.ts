/**
 * A run's book of steps: the step records templates read (`steps.NAME`), the counters kept beside
 * the snapshot, and the run record's list of step outcomes, in the order steps ended. Each entry
 * is told to the host's observer, and each attempt's end to the run's spans.
 */
import { STEP_UNDER_WAY, type RunEvent, type StepRecord } from '../compiler/run-context.js';
import { failureOutcome } from '../telemetry/failure-outcome.js';
import type { EngineObserver } from './engine-options.js';
import type { RunCounters } from './run-counters.js';
import type { RunRecord, StepEntry } from './run-record.js';
import type { RunSpans } from './run-spans.js';

/** What a step book starts from: a resumed run's stored records and counters, or nothing. */
export interface StoredBook {
  steps?: Record<string, StepRecord> | undefined;
  counters?: Partial<RunCounters> | undefined;
}

/** Keeps a run's step records, counters and step entries (see the module comment). */
export class StepBook {
  /** Whether some step may be held (see {@link stepHeld}), until the holds are released. */
  holding = false;
  /** Step records, beside the snapshot (see run-context.ts). */
  readonly steps: Record<string, StepRecord>;
  readonly counters: RunCounters;
  /** Steps stopped during the current transition, recorded once it is over. */
  private stopped: StepEntry[] = [];

  /**
   * @param record the run record, whose `steps` list the entries go to
   * @param observer told of each entry
   * @param spans the run's spans, told of each attempt that ends
   */
  constructor(
    private readonly record: RunRecord,
    private readonly observer: EngineObserver | undefined,
    private readonly spans: RunSpans | undefined,
    stored: StoredBook = {},
  ) {
    this.steps = stored.steps ?? {};
    this.counters = { transitions: 0, spawns: 0, ...stored.counters };
    this.holding = Object.values(this.steps).some((rec) => rec.held === true);
  }

  /** A step starts its first attempt. */
  stepStarted(node: string): StepRecord {
    const rec: StepRecord = {
      ...STEP_UNDER_WAY,
      startedAt: Date.now(),
      seq: this.counters.transitions,
    };
    this.steps[node] = rec;
    this.spans?.attemptBegun(node);
    return rec;
  }

  /**
   * A step entered while the run's directive is paused: recorded as under way but not begun, so
   * that a run resumed anywhere begins it then.
   */
  stepHeld(node: string): void {
    this.holding = true;
    this.steps[node] = { ...STEP_UNDER_WAY, seq: this.counters.transitions, held: true };
  }

  /** `nodeEntered`: a parallel block starts. */
  nodeEntered(node: string): void {
    this.counters.transitions++;
    this.stepStarted(node);
  }

  /** `branchEnded`: a branch of a parallel block reached its end or failed. */
  branchEnded(node: string, status: 'completed' | 'failed'): void {
    this.steps[node] = {
      status,
      result: null,
      error: null,
      attempts: 1,
      startedAt: null,
      endedAt: Date.now(),
    };
  }

  /** `stepEnded`: the step's outcome goes into its record and the run record. */
  stepEnded(event: RunEvent, node: string): void {
    const rec = (this.steps[node] ??= { ...STEP_UNDER_WAY });
    rec.endedAt = Date.now();
    delete rec.retryAt;
    delete rec.deadline;
    delete rec.runsOn;
    if ('edge' in event) {
      rec.status = event.skipped ? 'skipped' : 'completed';
      rec.result = event.result;
      rec.error = null;
      // What it wrote into the state: a rerun from a later step builds the state from these.
      if (event.assigned !== null) rec.assigned = event.assigned;
      else delete rec.assigned;
    } else if ('error' in event && event.error !== undefined && 'retryable' in event.error) {
      rec.status = 'failed';
      rec.error = event.error;
    }
    const status =
      rec.status === 'failed' ? 'failed' : rec.status === 'skipped' ? 'skipped' : 'completed';
    const entry: StepEntry = {
      name: node,
      status,
      attempts: rec.attempts,
      durationMs: rec.startedAt ? rec.endedAt - rec.startedAt : 0,
    };
    if (status === 'failed' && rec.error) {
      const { code, message, location } = rec.error;
      entry.error = { code, message, ...(location && { location }) };
    }
    this.spans?.attemptEnded(
      node,
      rec.attempts || 1,
      status === 'failed' && rec.error ? failureOutcome(rec.error) : status,
      status === 'failed' ? rec.error : null,
    );
    this.addEntry(entry);
  }

  /** A step was stopped before it ended; it is recorded after the transition that stopped it. */
  stepStopped(node: string): void {
    const rec = this.steps[node];
    // A step stopped while it waited to retry has no attempt under way: its last one was recorded.
    if (rec?.retryAt === undefined) this.spans?.attemptEnded(node, rec?.attempts || 1, 'cancelled');
    if (rec) {
      rec.status = 'cancelled';
      delete rec.retryAt;
      delete rec.deadline;
      delete rec.runsOn;
    }
    this.stopped.push({
      name: node,
      status: 'cancelled',
      attempts: rec?.attempts ?? 1,
      durationMs: rec?.startedAt ? Date.now() - rec.startedAt : 0,
    });
  }

  /** Records the steps stopped by the transition just taken, after its cause. */
  flushStopped(): void {
    if (this.stopped.length === 0) return;
    for (const entry of this.stopped) this.addEntry(entry);
    this.stopped = [];
  }

  private addEntry(entry: StepEntry): void {
    this.record.steps.push(entry);
    this.observer?.stepEnded?.(this.record.runId, entry);
  }
}
