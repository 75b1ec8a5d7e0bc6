import type { Telemetry, TelemetryOptions } from '../telemetry/telemetry.js';

/** What {@link Dirigent.open} takes. */
export interface DirigentOptions {
  /** The project: its directives and tools, `.ai/config/dirigent.yaml` (default: the current folder). */
  project?: string;
  /**
   * A Redis URL: runs go to the workers of that deployment. Without it, runs run in this process
   * and are kept in the project's `.dirigent/`.
   */
  redis?: string;
  /** The deployment's key prefix on Redis (default `$DIRIGENT_PREFIX` or `dirigent`). */
  prefix?: string;
  /**
   * How many shards the Redis deployment spreads its runs over (default `$DIRIGENT_SHARDS`, the
   * project's `shards`, else 1): every process of a deployment must agree (see `docs/scaling.md`).
   */
  shards?: number;
  /** Where spans and metrics go (see `telemetry/telemetry.ts`); default none. */
  telemetry?: Telemetry | TelemetryOptions;
  /** How long an idempotency key holds its run (default 24 h). */
  idempotencyWindowMs?: number;
}
