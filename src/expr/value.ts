/** Values written in directives (`value=`, `expr=`, literals from graphs). */
import type { ValueSpec } from '../directive/ast.js';
import { DirigentError, ErrorCode } from '../errors/index.js';
import { compileExpression, type ExpressionOptions } from './expression.js';
import type { Scope } from './scope.js';
import { compileTemplate, interpolateDeep } from './template.js';

/**
 * The value of `spec` in `scope`: a literal as it is, a template through
 * {@link compileTemplate} (a whole template keeps its type), an expression through
 * {@link compileExpression}. Both are compiled once and cached by their text.
 */
export function evaluateValue(spec: ValueSpec, scope: Scope, options?: ExpressionOptions): unknown {
  switch (spec.kind) {
    case 'literal':
      return spec.value;
    case 'template':
      return compileTemplate(spec.source).evaluate(scope);
    case 'expr':
      return compileExpression(spec.source).evaluate(scope, options);
    case 'deep':
      return interpolateDeep(spec.value, scope);
    default: {
      const unknown: never = spec;
      throw DirigentError.fatal(
        ErrorCode.INTERNAL,
        `unknown value kind "${String((unknown as { kind?: unknown }).kind)}"`,
      );
    }
  }
}
