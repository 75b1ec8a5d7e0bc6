/**
 * The words of bash that change how the words after them are read: programs that parse their
 * arguments as code again, shells with `-c`, reserved words, the arithmetic operators of `[[ ]]`
 * and the forms of an assignment.
 */

/** Programs that parse all their arguments as shell code again. */
export const REPARSE_PROGRAMS = new Set(['eval', 'ssh', 'watch']);
/** Programs whose `-c` option takes a script. */
export const SHELLS = new Set([
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'mksh',
  'ash',
  'busybox',
  'su',
  'fish',
]);
/** Reserved words after which a command follows. */
export const BEFORE_COMMAND = new Set([
  'if',
  'then',
  'elif',
  'else',
  'do',
  'while',
  'until',
  '!',
  'time',
  '{',
  '}',
  'fi',
  'done',
  'esac',
]);
/** Reserved words after which data follows. */
export const BEFORE_DATA = new Set(['case', 'for', 'select', 'in', 'function']);
/** Operators of `[[ ]]` whose operands bash evaluates as arithmetic. */
export const ARITH_OPS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
/** A whole assignment word: `NAME=…`, `NAME+=…` or `NAME[…]=…`. */
export const ASSIGNMENT = /^[A-Za-z_]\w*(\[[^\]]*\])?\+?=/;
/** The start of an assignment: `NAME=`, `NAME+=` or `NAME[` (its subscript). */
export const ASSIGNING = /^[A-Za-z_]\w*(\[|\+?=)/;
/** A variable name. */
export const NAME = /^[A-Za-z_]\w*$/;

/** `/usr/bin/env` → `env`; quotes and slots removed. */
export function programName(word: string): string {
  const plain = word.replace(/["'\\]/g, '');
  return plain.slice(plain.lastIndexOf('/') + 1);
}
