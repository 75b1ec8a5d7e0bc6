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

/** The jobs of the runs queue. Jobs name no project: a worker runs them in the one it serves. */
export type RunJobData =
  | {
      kind: 'start';
      runId: string;
      source: RunSource;
      inputs: Record<string, unknown>;
      /** Someone watches: publish the run's progress (see run-events.ts). */
      watch?: boolean;
      /** What started the run (default `queue`: a job added by any BullMQ client). */
      trigger?: RunTrigger;
      /** The run's trace, when the process that submitted it records telemetry. */
      trace?: RunTrace;
    }
  | {
      kind: 'signal';
      runId: string;
      name: string;
      payload: unknown;
      watch?: boolean;
    }
  | { kind: 'cancel'; runId: string; reason?: string }
  /** A waiting run's deadline (a wait's timeout, the run's time limit) has come. */
  | { kind: 'wake'; runId: string };
