/**
 * Rerun from a step (DESIGN.md, "Operating runs"): a new run of a run's directive that starts at
 * one of its steps, with the old run's inputs (or edited ones) and the state and step results that
 * existed before that step. The steps before it are not run again: their records are the old
 * run's, so `${steps.NAME.result}` reads what they produced then.
 *
 * The state before the step is built again from what each earlier step wrote when it completed
 * (`StepRecord.assigned`), in the order they ran, over the directive's initial state. A step in a
 * loop keeps only its last pass, so for a step inside a loop the rerun starts from its last pass.
 * The new run follows the directive as the project has it now, and links back (`rerunOf`).
 */
import type { CompiledNode } from '../compiler/compiled-directive.js';
import type { RunContext, StepRecord, UndoEntry } from '../compiler/run-context.js';
import type { Directive } from '../directive/ast.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { StoredRun } from './run-store.js';

/** Where a rerun starts, and what it starts with besides its inputs. */
export interface RerunSeed {
  /** The run it reruns, and the step it starts at. */
  of: { runId: string; step: string };
  /** The records of the steps that ran before that step, as the old run left them. */
  steps: Record<string, StepRecord>;
  /** The state as it stood before that step. */
  state: Record<string, unknown>;
  /** The compensations of the earlier steps, should the rerun fail or be cancelled. */
  undo?: UndoEntry[];
  /** The step's place in the run (its transition count): the earlier steps' are below it. */
  seq: number;
}

/** The tag a rerun carries, naming the run it reruns: the old run finds its reruns by it. */
export const RERUN_OF_TAG = 'dirigent.rerun-of';

/**
 * The seed of a rerun of `stored` from step `from` (default: the step it failed at) in `directive`
 * (the directive the rerun follows, compiled to `nodes`). `INVALID_REQUEST` with what to give
 * instead for a step that is not a top-level step of the directive, or did not run in the old run.
 */
export function rerunSeed(
  stored: StoredRun,
  directive: Directive,
  nodes: ReadonlyMap<string, CompiledNode>,
  from: string | undefined,
): RerunSeed {
  const { record } = stored;
  const step = from ?? failedStep(stored);
  const node = nodes.get(step);
  const topLevel = [...nodes.values()].filter((n) => n.node.kind === 'step' && n.parallel === null);
  const names = topLevel.map((n) => n.name);
  if (node === undefined || node.node.kind !== 'step' || node.parallel !== null)
    throw invalid(
      node === undefined
        ? `Directive ${record.directive} has no step "${step}".`
        : `Step "${step}" of ${record.directive} is inside parallel block "${node.parallel ?? '?'}": a rerun starts at a step of the process itself.`,
      `Rerun from one of: ${names.join(', ')}.`,
    );
  const at = stored.steps[step];
  if (at?.seq === undefined)
    throw invalid(
      `Step "${step}" never ran in run ${record.runId}: there is no state before it to start from.`,
      `Rerun from a step it reached: ${names.filter((n) => stored.steps[n]?.seq !== undefined).join(', ') || 'none'}.`,
    );
  const before = Object.entries(stored.steps)
    .filter(([name, rec]) => rec.seq !== undefined && rec.seq < at.seq! && nodes.has(name))
    .sort(([, a], [, b]) => a.seq! - b.seq!);
  const steps: Record<string, StepRecord> = {};
  let state: Record<string, unknown> = { ...directive.initialState };
  for (const [name, rec] of before) {
    steps[name] = rec;
    if (rec.status === 'completed' && rec.assigned) state = { ...state, ...rec.assigned };
  }
  const context = (stored.redrivePoint ?? stored.snapshot) as { context?: RunContext } | null;
  const undo = context?.context?.undo?.filter((u) => steps[u.step]?.status === 'completed');
  return {
    of: { runId: record.runId, step },
    steps,
    state,
    ...(undo !== undefined && undo.length > 0 && { undo }),
    seq: at.seq,
  };
}

/** The step a run failed at (or was stopped in); `INVALID_REQUEST` for a run that did not fail. */
function failedStep(stored: StoredRun): string {
  const { record } = stored;
  const step =
    record.error?.step ??
    record.steps.findLast((s) => s.status === 'failed' || s.status === 'cancelled')?.name;
  if (step !== undefined) return step;
  throw invalid(
    `Run ${record.runId} is ${record.status} with no failed step: say which step to rerun from.`,
    `Give the step: \`dirigent rerun ${record.runId} --from <step>\` (POST /v1/runs/${record.runId}/rerun {"from": "<step>"}).`,
  );
}

function invalid(message: string, hint: string): DirigentError {
  return DirigentError.fatal(ErrorCode.INVALID_REQUEST, message, { hint });
}
