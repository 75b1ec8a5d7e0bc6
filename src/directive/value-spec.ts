/** What a directive writes as values and as conditions (part of the AST, see `ast.ts`). */

/**
 * A value written in a directive: a plain literal, a template, a JSONata expression, or (from
 * RYE graphs) a structure whose strings are templates.
 */
export type ValueSpec =
  | { kind: 'literal'; value: unknown }
  | { kind: 'template'; source: string }
  | { kind: 'expr'; source: string }
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

/** A condition: RYE's `{path, op, value}` with `any`/`all`/`not`, or a JSONata expression. */
export type Condition =
  | { kind: 'compare'; path: string; op: CompareOp; value: unknown }
  | { kind: 'any'; of: Condition[] }
  | { kind: 'all'; of: Condition[] }
  | { kind: 'not'; of: Condition }
  | { kind: 'expr'; source: string };
