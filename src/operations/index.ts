/** The operations every face calls: the library's front door. */
export {
  Dirigent,
  type DirigentOptions,
  type StartRequest,
  type StartedRun,
  type Validation,
} from './dirigent.js';
export type { DirectiveInfo, InputInfo } from './directive-catalog.js';
export type { RunFilter, RunPage } from './run-filter.js';
export { DEFAULT_IDEMPOTENCY_WINDOW_MS } from './idempotency.js';
export type { BatchOptions, BatchReport, BatchStatus } from './batch.js';
export type { BatchInput, BatchResult, BatchCounts } from './batch-run.js';
