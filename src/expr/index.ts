/**
 * Run-time data access for directives: dotted paths, templates, conditions and JSONata
 * expressions over a {@link Scope}. Pure: no I/O.
 */
export * from './path.js';
export * from './scope.js';
export * from './template.js';
export * from './compare.js';
export * from './condition.js';
export * from './expression.js';
export * from './value.js';
