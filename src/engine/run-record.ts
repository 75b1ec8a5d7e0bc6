/**
 * The run record: what `dirigent run --json` prints and what stores keep (DIRECTIVES.md, "Run
 * outcome"). Plain JSON.
 */

import type { RunError } from '../compiler/run-context.js';
import type { AnswerSpec } from '../directive/answer-spec.js';
import type { SourceLocation } from '../errors/source-location.js';

/**
 * How a run stands. `running` only while work is under way; `queued` (never stored) while a run
 * started on a Redis deployment waits for a worker to take it up; `paused` while its directive (or
 * the deployment) is paused: it holds its next steps until it is resumed (see `operations/pause.ts`).
 */
export type RunStatus =
  | 'queued'
  | 'running'
  | 'waiting'
  | 'paused'
  | 'completed'
  | 'failed'
  | 'cancelled';

/** Every {@link RunStatus}, in the order a run can pass through them. */
export const RUN_STATUSES: readonly RunStatus[] = [
  'queued',
  'running',
  'waiting',
  'paused',
  'completed',
  'failed',
  'cancelled',
];

/** Whether a run with `status` has ended: nothing more happens to it. */
export function hasEnded(status: RunStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** One execution of a step, in the order steps ended. */
export interface StepEntry {
  name: string;
  status: 'completed' | 'failed' | 'skipped' | 'cancelled';
  attempts: number;
  durationMs: number;
  error?: { code: string; message: string; location?: SourceLocation };
}

/** A step that waits for a signal. */
export interface WaitingStep {
  step: string;
  /** The child run that waits, when it is not this run itself. */
  runId?: string;
  signal: string;
  /** The instruction's interpolated text, for instruction steps. */
  text?: string;
  /**
   * What the answer must hold, when the step declares it (`<answer>`): the faces build their
   * answer forms from it, and a signal whose payload does not match is refused.
   */
  answer?: AnswerSpec;
  /** When the wait times out (epoch ms), if it has a timeout. */
  deadline?: number;
}

/** The outcome of a run. */
export interface RunRecord {
  runId: string;
  directive: string;
  status: RunStatus;
  outputs: Record<string, unknown> | null;
  steps: StepEntry[];
  error: RunError | null;
  /** Steps waiting for a signal (status `waiting`). */
  waiting?: WaitingStep[];
  startedAt: number;
  endedAt: number | null;
  /** The run's tags (see `run-tags.ts`), when it has any: what runs are found by. */
  tags?: Record<string, string>;
  /** Its inputs in a few words (`customer=c7, amount=12`), for lists; none without inputs. */
  summary?: string;
  /** Each time the run was redriven after it failed or was cancelled, oldest first. */
  redrives?: RedriveEntry[];
  /** The run this one reruns from one of its steps (see `engine/rerun.ts`). */
  rerunOf?: { runId: string; step: string };
  /**
   * Its concurrency key, rendered, and the limit per key (see `engine/run-concurrency.ts`): it
   * holds one of the key's slots until it ends.
   */
  concurrency?: { key: string; limit: number };
}

/**
 * A redrive of a run (see `engine/redrive.ts`): when, by whom, from which steps, and how the run
 * had ended before it.
 */
export interface RedriveEntry {
  at: number;
  /** Who asked: `cli:<user>`, `api`, a library caller's own name. */
  by: string;
  /** The steps the run went on from: the one that failed, or those under way when it stopped. */
  steps: string[];
  /** How the run had ended. */
  status: 'failed' | 'cancelled';
  error: RunError | null;
}

/** When the run's time limit (`<limits duration_seconds>`) counts from: its start, or its latest redrive. */
export function clockStart(record: Pick<RunRecord, 'startedAt' | 'redrives'>): number {
  return record.redrives?.at(-1)?.at ?? record.startedAt;
}

/**
 * Exit status of the CLI for a run status (DIRECTIVES.md): 0 completed, 1 failed or cancelled, 3
 * waiting (or paused: the run waits for someone either way).
 */
export function exitCodeOf(status: RunStatus): number {
  switch (status) {
    case 'completed':
      return 0;
    case 'waiting':
    case 'paused':
      return 3;
    case 'failed':
    case 'cancelled':
    case 'queued':
    case 'running':
      return 1;
  }
}

/** The record of a run whose start job waits for a worker (never stored). */
export function queuedRecord(runId: string, directive: string, at: number): RunRecord {
  return {
    runId,
    directive,
    status: 'queued',
    outputs: null,
    steps: [],
    error: null,
    startedAt: at,
    endedAt: null,
  };
}
