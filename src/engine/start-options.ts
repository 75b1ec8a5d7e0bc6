import type { RerunSeed } from './rerun.js';
import type { RunTags } from './run-tags.js';
import type { RunTrace, RunTrigger } from '../telemetry/run-trace.js';

/** Options of `Engine.start`. */
export interface StartOptions {
  /** The run's id (default: a new UUID); a run of that id already live here is a conflict. */
  runId?: string;
  /** What started the run, for its telemetry (default `library`). */
  trigger?: RunTrigger;
  /** The run's trace, when the process that submitted it chose it already. */
  trace?: RunTrace;
  /** Content hashes of the tools the run's submitter resolved: each call carries its tool's. */
  tools?: Record<string, string>;
  /** Tags the start gives the run, besides (and over) those its directive declares. */
  tags?: RunTags;
  /** A rerun of another run: the run starts at the seed's step, with its state (see `rerun.ts`). */
  from?: RerunSeed;
}
