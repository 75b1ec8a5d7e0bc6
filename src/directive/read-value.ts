import { ErrorCode } from '../errors/error-codes.js';
import { hasTemplate } from '../expr/template.js';
import type { ValueSpec } from './ast.js';
import type { Diagnostics } from './diagnostics.js';
import { attrLoc } from './element-reader.js';
import { textOf, type XmlElement } from './xml-element.js';

/** A string that may hold templates: a template spec if it does, else a literal. */
export function templateOrLiteral(text: string): ValueSpec {
  return hasTemplate(text) ? { kind: 'template', source: text } : { kind: 'literal', value: text };
}

/**
 * Reads the value of `el` from its `value` or `expr` attribute, or (when `textAllowed`) from its
 * text; `type="json"` parses the text as JSON. Returns undefined when there is none.
 */
export function readValue(
  el: XmlElement,
  diag: Diagnostics,
  textAllowed: boolean,
): ValueSpec | undefined {
  const { value, expr, type } = el.attrs;
  if (value !== undefined && expr !== undefined) {
    diag.error(
      ErrorCode.INVALID_ATTRIBUTE,
      `<${el.tag}> has both "value" and "expr"; keep one.`,
      attrLoc(el, 'expr'),
      'value="…" is text with templates; expr="…" is a JSONata expression.',
    );
  }
  if (expr !== undefined) return { kind: 'expr', source: expr, loc: attrLoc(el, 'expr') };
  const inAttribute = value !== undefined && value !== '';
  const text = inAttribute ? value : textAllowed ? textOf(el) : undefined;
  if (text === undefined) return undefined;
  if (type === 'json') {
    try {
      return { kind: 'literal', value: JSON.parse(text) };
    } catch (err) {
      diag.error(
        ErrorCode.INVALID_ATTRIBUTE,
        `<${el.tag} type="json"> does not hold valid JSON: ${(err as Error).message}`,
        attrLoc(el, el.attrs.value !== undefined ? 'value' : 'type'),
        'Write the value as JSON, e.g. ["a", "b"] or {"k": 1}, or drop type="json".',
      );
      return undefined;
    }
  }
  if (type !== undefined && type !== 'string') {
    diag.error(
      ErrorCode.INVALID_ATTRIBUTE,
      `<${el.tag} type="${type}">: type must be "json" or "string".`,
      attrLoc(el, 'type'),
      'Use type="json" to parse the value as JSON; tool parameters are coerced to the tool\'s own types.',
    );
  }
  const spec = templateOrLiteral(text);
  if (spec.kind === 'template' && inAttribute) spec.loc = attrLoc(el, 'value');
  return spec;
}
