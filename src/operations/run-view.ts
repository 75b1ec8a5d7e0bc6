/**
 * Everything a page needs to show one run: its record, its inputs, each step's latest result and
 * error, the runs it started and the run that started it, its trace, the directive it runs (text
 * and graph), and its waterfall. Read from what the store keeps; nothing is computed twice.
 */
import { relative, sep } from 'node:path';
import type { StepRecord } from '../compiler/run-context.js';
import type { LoadedDirective } from '../engine/directive-loader.js';
import type { RunRecord } from '../engine/run-record.js';
import type { StoredRun } from '../engine/run-store.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { directiveGraph, type DirectiveGraph } from './directive-graph.js';
import { runTimeline, type TimelineRow } from './run-timeline.js';

/** See the module comment. */
export interface RunView {
  record: RunRecord;
  /** The inputs the run was started with (validated), or null while it is queued. */
  inputs: Record<string, unknown> | null;
  /** Each step's latest pass, by step name: status, result, error, attempts, times. */
  steps: Record<string, StepRecord>;
  /** The run that started this one (a child directive), if any. */
  parentRunId: string | null;
  /** The child runs this run started, with the step that started each. */
  children: { step: string; runId: string }[];
  /** The run's trace (32 hex digits), once a process with telemetry started it. */
  traceId: string | null;
  /** The directive as the run follows it: its file (relative to the project when inside it) and text. */
  source: { file: string; text: string } | null;
  /** The compiled machine to draw, or null when the text no longer compiles here ({@link graphError}). */
  graph: DirectiveGraph | null;
  /** Why there is no graph. */
  graphError?: string;
  timeline: TimelineRow[];
}

/**
 * The view of `record`, from the stored run when there is one (none while a Redis run is
 * queued), compiled with `compile` (the text a stored run follows, else `current`: the
 * directive as the project holds it now).
 */
export function runViewOf(
  record: RunRecord,
  stored: StoredRun | undefined,
  projectDir: string,
  compile: (file: string, text: string) => LoadedDirective,
  current?: LoadedDirective,
): RunView {
  const source = stored?.source ?? (current && { file: current.file, text: current.text });
  let graph: DirectiveGraph | null = null;
  let graphError: string | undefined;
  if (source !== undefined)
    try {
      graph = directiveGraph(
        current?.text === source.text
          ? current.compiled
          : compile(source.file, source.text).compiled,
      );
    } catch (err) {
      graphError = DirigentError.from(err).message;
    }
  const steps = stored?.steps ?? {};
  return {
    record,
    inputs: inputsOf(stored?.snapshot),
    steps,
    parentRunId: stored?.parentRunId ?? null,
    children: Object.entries(stored?.children ?? {}).map(([step, runId]) => ({ step, runId })),
    traceId: stored?.trace?.traceId ?? null,
    source: source ? { file: shown(source.file, projectDir), text: source.text } : null,
    graph,
    ...(graphError !== undefined && { graphError }),
    timeline: runTimeline(record, steps),
  };
}

/** The inputs in a persisted xstate snapshot's context. */
function inputsOf(snapshot: unknown): Record<string, unknown> | null {
  const context = (snapshot as { context?: { inputs?: unknown } } | undefined)?.context;
  const inputs = context?.inputs;
  return typeof inputs === 'object' && inputs !== null && !Array.isArray(inputs)
    ? (inputs as Record<string, unknown>)
    : null;
}

/** A file as a page shows it: relative to the project when inside it, else as stored. */
function shown(file: string, projectDir: string): string {
  const rel = relative(projectDir, file);
  return rel === '' || rel.startsWith('..') || rel.startsWith(sep)
    ? file
    : rel.split(sep).join('/');
}
