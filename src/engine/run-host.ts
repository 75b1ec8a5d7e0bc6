/**
 * What a run needs from whatever hosts it (the {@link Engine}): where its tool calls go, what it
 * reports to, how it is stored, and how it reaches other runs of the same process. A run knows
 * its host only through this port, so the engine can hold runs without the runs holding the
 * engine.
 */
import type { RunMachine } from '../compiler/machine-logic.js';
import type { StepRecord } from '../compiler/run-context.js';
import type { SpanParent, Telemetry } from '../telemetry/telemetry.js';
import type { RunTrace } from '../telemetry/run-trace.js';
import type { ToolDispatcher } from '../tools/tool-dispatcher.js';
import type { EngineObserver } from './engine-options.js';
import type { LinkedRun } from './linked-run.js';
import type { RunCounters } from './run-counters.js';
import type { RunLineage } from './run-lineage.js';
import type { RunRecord } from './run-record.js';

/** The host of live runs (see the module comment). */
export interface RunHost {
  /** Root of the project: tools are confined to it. */
  readonly projectDir: string;
  /** Where tool calls go. */
  readonly dispatcher: ToolDispatcher;
  /** What `{env:…}` reads: the allowed variables only (see `policy/run-environment.ts`). */
  readonly env: Record<string, string | undefined>;
  readonly observer: EngineObserver | undefined;
  /** Whether runs are stored after every transition, not only when they wait or end. */
  readonly durable: boolean;
  /** Where spans and metrics go; undefined records nothing. */
  readonly telemetry: Telemetry | undefined;
  /** Whether the runs of `directive` (an item id) hold their next steps: it is paused. */
  isPaused(directive: string): boolean;
  /** The compiled machine with its effects provided (each calls the acting run's `effects`). */
  providedMachine(machine: RunMachine): RunMachine;
  /** Stores the run as it stands. */
  persist(run: StorableRun): Promise<void>;
  /** A run live in this process (a parent or a child of the asking run). */
  activeRun(runId: string): LinkedRun | undefined;
  /** The run ended and was stored: it leaves the host. */
  unregister(runId: string): void;
  /**
   * Starts a child directive of `parent` (resolved from the parent's file) with `inputs`, as run
   * `runId`. With `again` (the parent resumed, its step started again), a child of that id that is
   * live or stored is taken up instead: resumed, or its record when it has ended.
   */
  startChild(
    ref: string,
    inputs: Record<string, unknown>,
    parent: ParentRun,
    parentSpan: SpanParent | undefined,
    child: { runId: string; again: boolean },
  ): Promise<LinkedRun | RunRecord>;
  /** Fire-and-forget cancel of a live run (a child whose step was stopped). */
  cancel(runId: string, reason?: string): void;
  /** Step work that was stopped and is still stopping: the host awaits it before exiting. */
  trackWork(work: Promise<unknown>): void;
}

/** What the host reads of a run to start a child directive of it. */
export interface ParentRun {
  readonly runId: string;
  readonly lineage: RunLineage;
  /** The parent's directive file, which a child's item id resolves against. */
  readonly loaded: { readonly file: string };
  /** Content hashes of the tools the run's submitter resolved; children inherit them. */
  readonly toolHashes: Record<string, string> | undefined;
  /**
   * Whether this process let the run go (another process resumes it): a child it was still
   * starting is not started here, since the run that resumes it starts the child itself.
   */
  readonly isReleased: boolean;
}

/** What the host reads of a run to store it (see `run-store.ts`). */
export interface StorableRun extends ParentRun {
  readonly record: RunRecord;
  /** The directive's file and exact text, so a resumed run follows the definition it started with. */
  readonly loaded: {
    readonly file: string;
    readonly text: string;
    /** The text's content hash, as the directive was compiled with it. */
    readonly compiled: { readonly directive: { readonly source: { readonly hash: string } } };
  };
  readonly children: Record<string, string>;
  readonly steps: Record<string, StepRecord>;
  readonly counters: RunCounters;
  readonly trace: RunTrace | undefined;
  /** The machine's snapshot to store. */
  persistedSnapshot(): unknown;
  /** Where a redrive would go on from, once the run failed, was cancelled or compensates. */
  redrivePoint(): unknown;
}
