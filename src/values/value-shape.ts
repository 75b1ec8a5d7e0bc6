/**
 * The shapes a value must have where a shell (or a program it starts) would read more than data
 * in it: an integer in arithmetic, a name where bash takes a variable's name, plain words in text
 * bash parses again, one token in another language's program text, no leading `-` where a
 * program takes options. Each shape is a test of the value's text, so that whoever writes the
 * check (rendering a command, validating a run's inputs before it starts) asks the same question.
 */

import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';

/** What a value must be to stand somewhere without becoming code. */
export type ValueShape =
  | 'integer'
  | 'name'
  | 'shell-words'
  | 'code-word'
  | 'not-option'
  | 'no-options'
  | 'one-word'
  | 'nothing';

/** Where a value stands that asks for a shape, and how to write the command safely instead. */
export interface ShellNeed {
  shape: ValueShape;
  /** Where the value stands, in words: "arithmetic (`(( ))`)", "the script of `bash -c`". */
  construct: string;
  /** The safe way to write the command, with `{value}` where the value's template goes. */
  hint: string;
}

/** What a value may hold where a shell parses it again: words, never syntax. */
const SHELL_WORDS = /^[\p{L}\p{N} _.,:/@%+=-]*$/u;
/** One token that no language here reads as more than a number, a name or a literal. */
const CODE_WORD = /^[\p{L}\p{N}_.+-]*$/u;

const SHAPES: Record<ValueShape, { holds: (text: string) => boolean; otherwise: string }> = {
  integer: {
    holds: (t) => /^\s*[+-]?\d+\s*$/.test(t),
    otherwise: 'its value is not an integer',
  },
  name: {
    holds: (t) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(t),
    otherwise: 'its value is not a variable name (a letter or _, then letters, digits or _)',
  },
  'shell-words': {
    holds: (t) => SHELL_WORDS.test(t),
    otherwise:
      'its value holds characters other than letters, digits, spaces and _ . , : / @ % + = -',
  },
  'code-word': {
    holds: (t) => CODE_WORD.test(t),
    otherwise: 'its value is not one word of letters, digits and _ . + -',
  },
  'not-option': {
    holds: (t) => !t.startsWith('-'),
    otherwise: 'its value begins with -, so the program would take it for an option',
  },
  'no-options': {
    holds: (t) => !/(^|\s)-/.test(t),
    otherwise: 'a word of its value begins with -, so the program would take it for an option',
  },
  'one-word': {
    holds: (t) => !/\s/.test(t),
    otherwise: 'its value holds blanks, which would split it into several words of code',
  },
  nothing: {
    holds: (t) => t === '',
    otherwise: 'whoever supplies the value would choose the code that runs',
  },
};

/**
 * The first need `text` fails, with why ("its value is not an integer"), or undefined when it
 * meets them all.
 */
function unmetNeed(
  text: string,
  needs: readonly ShellNeed[],
): { need: ShellNeed; why: string } | undefined {
  for (const need of needs) {
    if (!SHAPES[need.shape].holds(text)) return { need, why: SHAPES[need.shape].otherwise };
  }
  return undefined;
}

/**
 * Refuses, with a fatal `UNSAFE_VALUE`, `text` (the value of the template `label`) when it fails
 * one of `needs`; `done` says what did not happen, `location` where the value stands.
 */
export function checkNeeds(
  text: string,
  needs: readonly ShellNeed[],
  label: string,
  done = 'the command was not run',
  location?: SourceLocation,
): void {
  const unmet = unmetNeed(text, needs);
  if (unmet === undefined) return;
  throw DirigentError.fatal(
    ErrorCode.UNSAFE_VALUE,
    `${label} stands in ${unmet.need.construct}, where bash would read more than data in it; ${unmet.why}; ${done}.`,
    {
      hint: unmet.need.hint.replaceAll('{value}', label),
      details: { template: label, construct: unmet.need.construct, shape: unmet.need.shape },
      ...(location !== undefined && { location }),
    },
  );
}

/** Needs that differ in shape or construct, each once. */
export function distinctNeeds(needs: readonly ShellNeed[]): ShellNeed[] {
  const seen = new Set<string>();
  return needs.filter((n) => {
    const key = `${n.shape}\0${n.construct}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
