/**
 * The errors of templates: one that cannot be parsed, and (see `resolve-slot.ts`) a path that is
 * missing when it is evaluated.
 */
import { DirigentError, ErrorCode } from '../errors/index.js';

/** The forms a template may take, as the hint of an invalid one. */
const SYNTAX_HINT =
  'Templates are ${root.path}, ${path?}, ${a || b}, {input:x}, {input:x:default} or {env:VAR}; write $${ for a literal ${.';

/**
 * The fatal `INVALID_TEMPLATE` error of a template that cannot be parsed; `template` is the
 * offending piece only, not the whole text (a `<render>` can be long).
 */
export function invalidTemplate(template: string, reason: string): DirigentError {
  const message = `invalid template ${template}: ${reason}`;
  return templateError(ErrorCode.INVALID_TEMPLATE, message, SYNTAX_HINT, template);
}

/** A fatal template error of `code`, naming the `template` in its details. */
export function templateError(
  code: ErrorCode,
  message: string,
  hint: string,
  template: string,
): DirigentError {
  return DirigentError.fatal(code, message, { hint, details: { template } });
}
