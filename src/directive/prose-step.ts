/** RYE's prose steps, which Dirigent hands to whoever answers them as written. */
import type { ProcessNode } from './ast.js';

/**
 * Whether `step` is a RYE step whose prose became its instruction (no `<instruction>` element:
 * the instruction is placed at the step itself). Its text is shown as written where its templates
 * do not render, so what validation finds in it is a warning, and what it reads is not required.
 */
export function isProseStep(step: ProcessNode): boolean {
  if (step.kind !== 'step' || step.action.type !== 'instruction') return false;
  const at = step.action.loc;
  return at.line === step.loc.line && at.column === step.loc.column;
}
