import type { RunTrace, RunTrigger } from '../telemetry/run-trace.js';
import type { RerunSeed } from './rerun.js';
import type { RunTags } from './run-tags.js';
import type { StoredRun } from './run-store.js';

/** How a run comes to be live here: started (by a trigger, or as a child), or restored. */
export type RunStart =
  | {
      inputs: Record<string, unknown>;
      trigger: RunTrigger;
      /** The run's trace, when whoever submitted it chose it already. */
      trace?: RunTrace;
      /** Content hashes of the tools the run's submitter resolved. */
      tools?: Record<string, string>;
      /** The run's tags, settled (see `run-tags.ts`). */
      tags?: RunTags;
      /** A rerun: the run starts at the seed's step, with its state (see `rerun.ts`). */
      from?: RerunSeed;
    }
  | { stored: StoredRun };
