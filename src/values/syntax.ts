/**
 * The languages a tool's text can be code in, and how a tool says which of its parameters hold
 * such text, so that values written into it are written as data (`shell-render.ts`,
 * `url-render.ts`).
 */

/** A language whose text Dirigent writes values into as data. */
export type Syntax = 'shell' | 'url';

/** The JSON Schema keyword by which a tool declares the language of a parameter. */
export const SYNTAX_KEYWORD = 'x-dirigent-syntax';

/**
 * Tools whose parameters are code, known by item id: RYE's, whose schemas cannot say so, and the
 * built-in shell tool, whose schema says so too but which the directive parser (which loads no
 * tools) must know without it.
 */
const KNOWN: Record<string, Record<string, Syntax>> = {
  'rye/bash/bash': { command: 'shell' },
  'rye/bash': { command: 'shell' },
  'dirigent/shell/bash': { command: 'shell' },
};

/**
 * The language of parameter `name` of the tool `itemId`, whose parameter schema is `schema`: what
 * the schema declares with {@link SYNTAX_KEYWORD}, else what Dirigent knows of RYE's tools, else
 * undefined (plain text).
 */
export function declaredSyntax(
  itemId: string,
  schema: object | undefined,
  name: string,
): Syntax | undefined {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  const property = properties?.[name] as Record<string, unknown> | undefined;
  const declared = property?.[SYNTAX_KEYWORD];
  if (declared === 'shell' || declared === 'url') return declared;
  return KNOWN[itemId]?.[name];
}
