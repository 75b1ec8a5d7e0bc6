import type { RunRecord } from '../engine/run-record.js';
import type { ItemKind } from '../items/item-kind.js';
import type { SpaceName } from '../items/space.js';
import type { RunTrigger } from '../telemetry/run-trace.js';

/** What `execute` takes. */
export interface ExecuteRequest {
  kind: ItemKind;
  itemId: string;
  /** A tool's parameters, a directive's inputs; unused for knowledge. */
  parameters?: Record<string, unknown>;
  /** Check only: the item resolves and verifies, the parameters are valid; nothing runs. */
  dryRun?: boolean;
  /**
   * A directive: resolve once the run ends or waits (default), or at once with the run as it
   * stands (`false`).
   */
  wait?: boolean;
  /**
   * A directive run that waits: answer it instead of starting a run. `answer` is the waiting
   * step's result (an instruction's answer, a signal's payload).
   */
  resume?: { runId: string; answer?: unknown; signal?: string };
  /** What started a directive's run, for its telemetry (default `library`). */
  trigger?: RunTrigger;
}

/** What `execute` answers, by kind. */
export type Executed =
  | { kind: 'tool'; itemId: string; dryRun: false; result: unknown; durationMs: number }
  | {
      kind: 'tool';
      itemId: string;
      dryRun: true;
      params: Record<string, unknown>;
      chain: { itemId: string; space: string }[];
    }
  | { kind: 'directive'; itemId: string; dryRun: false; run: RunRecord }
  | { kind: 'directive'; itemId: string; dryRun: true; inputs: Record<string, unknown> }
  | {
      kind: 'knowledge';
      itemId: string;
      dryRun: boolean;
      space: SpaceName;
      metadata: Record<string, unknown>;
      content: string;
    };
