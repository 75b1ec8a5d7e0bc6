import type { Job } from 'bullmq';
import type { RunRecord } from '../engine/run-record.js';
import type { RerunSeed } from '../engine/rerun.js';
import type { RunTags } from '../engine/run-tags.js';
import type { RunTrace, RunTrigger } from '../telemetry/run-trace.js';

/**
 * A directive as a run job carries it: by item id, with its text and the text's hash. Never a
 * path of the machine that submitted it: a worker resolves the item id in the project it serves,
 * and refuses to run when its copy differs (`DIRECTIVE_MISMATCH`).
 */
export interface RunSource {
  /** The directive's item id (`category/name`, or its name when it is not under `.ai/directives/`). */
  directive: string;
  text: string;
  /** `contentHash(text)`. */
  hash: string;
  /** The file's extension (`.md`, or `.yaml` for a RYE graph): how to read the text. */
  ext: string;
  /**
   * Content hashes of the tools the directive names literally, as the submitting side resolved
   * them: a worker whose copy of one differs refuses its calls (`TOOL_MISMATCH`).
   */
  tools?: Record<string, string>;
}

/** One run of a group of starts: what a start job says, its directive named by index. */
export interface StartMember {
  runId: string;
  /** Index of the run's directive in the group's `sources`. */
  source: number;
  inputs: Record<string, unknown>;
  trigger?: RunTrigger;
  trace?: RunTrace;
  tags?: RunTags;
}

/** The jobs of the runs queue. Jobs name no project: a worker runs them in the one it serves. */
export type RunJobData =
  | {
      kind: 'start';
      runId: string;
      source: RunSource;
      inputs: Record<string, unknown>;
      /** What started the run (default `queue`: a job added by any BullMQ client). */
      trigger?: RunTrigger;
      /** The run's trace, when the process that submitted it records telemetry. */
      trace?: RunTrace;
      /** Tags the start gave the run, over its directive's. */
      tags?: RunTags;
      /** A rerun of another run from one of its steps (see `engine/rerun.ts`). */
      from?: RerunSeed;
      /**
       * A run of a group of starts that goes on in a job of its own (it parked, its worker
       * closed, or it could not begin there): it may be stored already, and is claimed first.
       */
      alone?: true;
    }
  /**
   * Runs started together (see `start-group.ts`): one job, each run driven by the worker that
   * takes it until it ends or waits; a run that parks, is handed back or fails there for good goes
   * on in a start job of its own, marked `alone`, whose id is the run's (`go-alone.ts`).
   */
  | { kind: 'starts'; sources: RunSource[]; runs: StartMember[] }
  | {
      kind: 'signal';
      runId: string;
      name: string;
      payload: unknown;
    }
  | {
      kind: 'cancel';
      runId: string;
      reason?: string;
      /** `false`: the run ends cancelled without running the compensations of its steps. */
      compensate?: false;
    }
  /** A waiting run's deadline (a wait's timeout, the run's time limit) has come. */
  | { kind: 'wake'; runId: string }
  /**
   * Redrive a run that failed or was cancelled (`engine/redrive.ts`). `redrives`: how many times it
   * had been redriven when this was asked, so a job delivered again after its redrive happened
   * goes on with the run rather than redriving it twice.
   */
  | { kind: 'redrive'; runId: string; by: string; redrives: number }
  /** A paused run's directive was resumed: its held steps begin (`operations/pause.ts`). */
  | { kind: 'unpause'; runId: string };

/** The jobs about one run: every kind but a group of starts. */
export type OneRunJobData = Exclude<RunJobData, { kind: 'starts' }>;

/** A start of one run. */
export type StartJobData = Extract<RunJobData, { kind: 'start' }>;

/** A group of starts. */
export type StartsJobData = Extract<RunJobData, { kind: 'starts' }>;

/**
 * What a run job completes with: the run's record as the job left it, or for a group of starts
 * the records of the runs that ended or wait (the others went on in jobs of their own).
 */
export type RunJobResult = RunRecord | RunRecord[];

/** A job of the runs queue. */
export type RunJob = Job<RunJobData, RunJobResult>;

/** Run `member`'s start, as a start job of its own would say it. */
export function startOfMember(group: StartsJobData, member: StartMember): StartJobData {
  return {
    kind: 'start',
    runId: member.runId,
    source: group.sources[member.source]!,
    inputs: member.inputs,
    ...(member.trigger && { trigger: member.trigger }),
    ...(member.trace && { trace: member.trace }),
    ...(member.tags && { tags: member.tags }),
  };
}
