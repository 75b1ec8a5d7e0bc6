/** What the API answers, as the operations define it (types only: nothing of the server is bundled). */
export type { RunRecord, RunStatus, StepEntry, WaitingStep } from '../../src/engine/run-record.js';
export type { AnswerFieldSpec, AnswerSpec } from '../../src/directive/answer-spec.js';
export type { StepRecord } from '../../src/compiler/run-context.js';
export type { RunView } from '../../src/operations/run-view.js';
export type { RunCounts } from '../../src/run-backend/run-counts.js';
export type { RunSummary } from '../../src/run-backend/run-changes.js';
export type { DirectiveInfo, InputInfo } from '../../src/operations/directive-catalog.js';
export type {
  DirectiveGraph,
  GraphCluster,
  GraphEdge,
  GraphNode,
} from '../../src/operations/directive-graph.js';
export type { TimelineRow } from '../../src/operations/run-timeline.js';
export type { BulkActionName, BulkReport, BulkSample } from '../../src/operations/bulk-action.js';
export type { PauseState } from '../../src/operations/pause.js';

/** `GET /v1/info`. */
export interface ServerInfo {
  mode: 'embedded' | 'redis';
  version: string;
  traceUrl: string | null;
}

/** `GET /v1/runs`. */
export interface RunPage {
  runs: import('../../src/engine/run-record.js').RunRecord[];
  next?: string;
}
