/**
 * Dispatching a step: what each kind of action does when the machine enters its step. A tool or
 * child directive (`<execute>`) and a `<foreach>` become work tried under the step's policy
 * ({@link StepWork.workStep}); a `<render>`, `<return>` or gate settles at once; a `<wait>` or
 * `<instruction>` waits for its signal.
 */
import type { CompiledNode } from '../compiler/compiled-directive.js';
import type { RunContext, UndoItem } from '../compiler/run-context.js';
import { scopeOf, settle, type RunData } from '../compiler/settle.js';
import { answerSpecOf } from '../directive/answer-spec.js';
import type { StepNode } from '../directive/ast.js';
import { compileTemplate } from '../expr/template.js';
import { evaluateValue } from '../expr/value.js';
import { executeAction, type ExecutingRun } from './execute-action.js';
import { instructionText } from './instruction-text.js';
import { runAttempts } from './run-attempts.js';
import { runForeach } from './run-foreach.js';
import type { WaitingStep } from './run-record.js';
import type { StepTry, StepWork } from './step-work.js';
import type { StepWaits } from './step-waits.js';

/** What dispatching a step reads and calls on its run (an {@link ActiveRun}). */
export interface DispatchingRun
  extends ExecutingRun,
    Pick<StepWork, 'workStep' | 'settleStep' | 'settleStepWith'> {
  readonly data: RunData;
  readonly waiting: StepWaits;
}

/** Performs the action of step `cn` in `context` (see the module comment). */
export function dispatchStep(
  run: DispatchingRun,
  cn: CompiledNode,
  step: StepNode,
  context: RunContext,
): void {
  const action = step.action;
  const scope = scopeOf(context, run.data);
  switch (action.type) {
    case 'execute': {
      const policy =
        step.retry ?? (action.itemType === 'tool' ? toolPolicy(run, action.itemId) : undefined);
      run.workStep(
        cn,
        step,
        (attempt, signal) => executeAction(run, action, scope, cn.name, attempt, signal),
        policy,
        undefined,
      );
      return;
    }
    case 'foreach': {
      // Items retry one by one under the tool's policy; the step itself only under its <retry>.
      const itemPolicy = step.retry ?? toolPolicy(run, action.execute.itemId);
      // A step that declares <compensate> keeps the items its last try completed, to undo each.
      let completed: UndoItem[] | undefined;
      const work: StepTry = (_attempt, signal) => {
        if (step.compensate !== undefined) completed = [];
        return runForeach(action, scope, signal, async (exec, vars, itemSignal) => {
          const outcome = await runAttempts(
            (n, s) =>
              executeAction(
                run,
                exec,
                { ...scope, vars },
                cn.name,
                n,
                s,
                vars[`${action.as}_index`] as number,
              ),
            { policy: itemPolicy, signal: itemSignal },
          );
          if (!outcome.ok) throw outcome.error;
          completed?.push({ index: vars[`${action.as}_index`] as number, item: vars[action.as] });
          return outcome.value;
        });
      };
      const items = step.compensate && (() => (completed ?? []).sort((a, b) => a.index - b.index));
      run.workStep(cn, step, work, step.retry, action.collect, items);
      return;
    }
    case 'render':
      run.settleStep(cn, context, compileTemplate(action.template).evaluate(scope));
      return;
    case 'instruction':
    case 'wait': {
      const w: WaitingStep = { step: cn.name, signal: action.signal };
      if (action.type === 'instruction') w.text = instructionText(action.text, scope);
      if (action.answer !== undefined) w.answer = answerSpecOf(action.answer);
      if (action.timeoutMs !== undefined) w.deadline = Date.now() + action.timeoutMs;
      run.waiting.add(w);
      return;
    }
    case 'return': {
      const out = action.output;
      const returned = out
        ? Object.fromEntries(Object.entries(out).map(([k, v]) => [k, evaluateValue(v, scope)]))
        : { ...context.state };
      run.settleStepWith(cn, () => ({ ...settle(cn, context, run.data, null), returned }));
      return;
    }
    case 'gate':
      run.settleStep(cn, context, null);
      return;
  }
}

/** The tool's own retry policy, when its id is known before the step runs. */
function toolPolicy(run: DispatchingRun, itemId: string) {
  return itemId.includes('{') ? undefined : run.host.dispatcher.describe(itemId)?.retry;
}
