/** The operations every face calls: the library's front door. */
export { Dirigent } from './dirigent.js';
export type { DirigentOptions } from './dirigent-options.js';
export type { StartRequest, StartedRun } from './start-request.js';
export type { Validation } from './validate-directive.js';
export type { Emitted } from './emit-event.js';
export type { Schedule } from './schedule.js';
export type { ScheduleRequest } from './schedule-of.js';
export type { DirectiveInfo, InputInfo } from './directive-catalog.js';
export type { RunFilter, RunPage } from '../run-backend/run-filter.js';
export { DEFAULT_IDEMPOTENCY_WINDOW_MS } from './idempotency.js';
export type { BatchOptions, BatchReport, BatchStatus } from '../batches/batch.js';
export type { BatchInput, BatchResult, BatchCounts } from '../batches/batch-run.js';
export type { RunView } from './run-view.js';
export type { RunCounts, CountFilter } from '../run-backend/run-counts.js';
export type { RunSummary } from '../run-backend/run-changes.js';
export type { DirectiveGraph, GraphNode, GraphEdge, GraphCluster } from './directive-graph.js';
export type { TimelineRow } from './run-timeline.js';
export type { RunQueries } from './run-queries.js';
