import type { InputType } from './ast.js';

/**
 * Type names people write for the declared types of `<input>` and `<answer>` (`int`, `bool`,
 * `list`, `dict`, …): a did-you-mean names the type meant.
 */
export const TYPE_ALIASES: Readonly<Record<string, InputType>> = {
  int: 'integer',
  long: 'integer',
  str: 'string',
  text: 'string',
  bool: 'boolean',
  float: 'number',
  double: 'number',
  decimal: 'number',
  num: 'number',
  list: 'array',
  dict: 'object',
  map: 'object',
  json: 'object',
};
