/** What a directive writes as values and as conditions (part of the AST, see `ast.ts`). */
import type { SourceLocation } from '../errors/source-location.js';

/**
 * A value written in a directive: a plain literal, a template, a JSONata expression, or (from
 * RYE graphs) a structure whose strings are templates. `loc`, when known, is where the attribute
 * holding a template or an expression is written (for the errors validation finds in it); a value
 * written as an element's text is placed at its element.
 */
export type ValueSpec =
  | { kind: 'literal'; value: unknown }
  | { kind: 'template'; source: string; loc?: SourceLocation }
  | { kind: 'expr'; source: string; loc?: SourceLocation }
  | { kind: 'deep'; value: unknown };

/** Comparison operators of RYE's graph conditions. */
export const COMPARE_OPS = [
  'eq',
  'ne',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'contains',
  'regex',
  'exists',
] as const;
/** One of {@link COMPARE_OPS}. */
export type CompareOp = (typeof COMPARE_OPS)[number];

/**
 * A condition: RYE's `{path, op, value}` with `any`/`all`/`not`, or a JSONata expression. `loc`,
 * when known, is where its `path` or `expr` attribute is written (for the errors validation finds
 * in it); values and conditions read from RYE's YAML graphs have none.
 */
export type Condition =
  | { kind: 'compare'; path: string; op: CompareOp; value: unknown; loc?: SourceLocation }
  | { kind: 'any'; of: Condition[] }
  | { kind: 'all'; of: Condition[] }
  | { kind: 'not'; of: Condition }
  | { kind: 'expr'; source: string; loc?: SourceLocation };
