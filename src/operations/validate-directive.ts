import type { Diagnostic } from '../directive/ast.js';
import { diagnosticsOf } from '../directive/diagnostics.js';
import type { DirectiveLoader, LoadedDirective } from '../engine/directive-loader.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { infoOf, type DirectiveInfo } from './directive-catalog.js';

/** What {@link Dirigent.validate} finds. */
export interface Validation {
  valid: boolean;
  errors: Diagnostic[];
  warnings: Diagnostic[];
  /** What the directive offers, when it is valid. */
  directive?: DirectiveInfo;
}

/** What a directive is validated with: the project's loader, and how it loads directives by item id. */
export interface ValidateTarget {
  readonly loader: Pick<DirectiveLoader, 'fromText' | 'fileOf'>;
  load(directive: string): Promise<LoadedDirective>;
}

/**
 * Checks a directive without running it: one of the project's by item id, or a text (read as the
 * content of a directive file, under the project's policy). Never throws for the directive's own
 * problems: they are the answer; `UNKNOWN_DIRECTIVE` for an item id the project does not hold.
 */
export async function validateDirective(
  target: ValidateTarget,
  request: { directive: string } | { source: string },
): Promise<Validation> {
  try {
    const loaded =
      'source' in request
        ? target.loader.fromText(target.loader.fileOf('_request', '.md'), request.source)
        : await target.load(request.directive);
    const info = infoOf(loaded, 'project');
    return { valid: true, errors: [], warnings: info.warnings, directive: info };
  } catch (err) {
    const e = DirigentError.from(err);
    // A directive the project does not hold is the request's problem, not a finding.
    if ('directive' in request && e.code === ErrorCode.UNKNOWN_DIRECTIVE) throw e;
    return { valid: false, errors: diagnosticsOf(e), warnings: [] };
  }
}
