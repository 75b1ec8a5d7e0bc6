/** Dirigent's library entry point: parse, compile and run directives from code. */
export { parseDirective, contentHash } from './directive/parse-directive.js';
export type * from './directive/ast.js';
export { compileDirective } from './compiler/compile-directive.js';
export type { CompiledDirective, CompiledNode } from './compiler/compiled-directive.js';
export { toMermaid } from './compiler/to-mermaid.js';
export { readGraph } from './compiler/read-graph.js';
export { Engine, type CancelOptions, type StartOptions } from './engine/engine.js';
export type { ActiveRun } from './engine/active-run.js';
export type { EngineObserver, EngineOptions } from './engine/engine-options.js';
export { DirectiveLoader, type LoadedDirective } from './engine/directive-loader.js';
export { MemoryRunStore } from './engine/memory-run-store.js';
export { FileRunStore } from './engine/file-run-store.js';
export type { RunStore, StoredRun } from './engine/run-store.js';
export {
  exitCodeOf,
  type RunRecord,
  type RunStatus,
  type StepEntry,
  type WaitingStep,
} from './engine/run-record.js';
export * from './errors/index.js';
export * from './tools/index.js';
export { ItemDispatcher } from './tools/item-dispatcher.js';
export { ItemResolver, type Resolution } from './items/item-resolver.js';
export { defaultSpaces, type Space, type SpaceName } from './items/space.js';
export * from './items/signing/index.js';
export type { TelemetryOptions } from './telemetry/telemetry.js';
export { dirigentIdGenerator, PinnedIdGenerator } from './telemetry/pinned-id-generator.js';
export { startTelemetry, type StartedTelemetry } from './telemetry/start-telemetry.js';
export { Attr, Metric } from './telemetry/attributes.js';
export { traceIdOfRun, type RunTrace, type RunTrigger } from './telemetry/run-trace.js';
export * from './operations/index.js';
