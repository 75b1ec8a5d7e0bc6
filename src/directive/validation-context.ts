/** The state the checks of one directive share while `validateDirective` walks it. */
import type { SourceLocation } from '../errors/source-location.js';
import type { Directive, StepNode } from './ast.js';
import type { Diagnostics } from './diagnostics.js';
import type { DirectiveChecks } from './directive-checks.js';

/** What the checks of one directive share. */
export interface ValidationContext {
  d: Directive;
  diag: Diagnostics;
  /** Every step, parallel block and branch, by name, where it is written. */
  names: Map<string, SourceLocation>;
  /** The steps, by name: what their records and answers hold. */
  steps: Map<string, StepNode>;
  stateKeys: Set<string>;
  checkInputs: boolean;
  checks: DirectiveChecks;
  secrets: ReadonlySet<string>;
}
