import type { RunTrace, RunTrigger } from '../telemetry/run-trace.js';

/** The jobs of the runs queue. */
export type RunJobData =
  | {
      kind: 'start';
      runId: string;
      /** The directive's file and text as the trigger read them: workers need no copy of it. */
      source: { file: string; text: string };
      inputs: Record<string, unknown>;
      projectDir: string;
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
      projectDir: string;
      watch?: boolean;
    }
  | { kind: 'cancel'; runId: string; reason?: string; projectDir: string }
  /** A waiting run's deadline (a wait's timeout, the run's time limit) has come. */
  | { kind: 'wake'; runId: string; projectDir: string };
