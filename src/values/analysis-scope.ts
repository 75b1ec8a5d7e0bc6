/**
 * What the shell analysis (`shell-analysis.ts`) and the rules of each program
 * (`program-needs.ts`) share: a word once expanded, where a command's input comes from, text
 * that can be seen, the hints that say how to write a command safely, and the moves a program's
 * rule may make on the analysis it is part of.
 */
import type { ShellUnit, Word } from './shell-tree.js';
import { CLEAN, type Taint } from './value-flow.js';
import type { ValueShape } from './value-shape.js';

/** Shell text that can be seen (a here-document, a here-string, `eval`'s words). */
export interface Visible {
  units: ShellUnit[];
  /** What each hole of {@link units} carries. */
  taints: Taint[];
}

/** Where a command's standard input comes from. */
export interface Stdin {
  /** What it may carry. */
  taint: Taint;
  /** The texts of here-documents and here-strings. */
  visible: Visible[];
  /** Part of it comes from where its text cannot be seen (a pipe, a file). */
  opaque: boolean;
}

/** No input. */
export const NO_STDIN: Stdin = { taint: CLEAN, visible: [], opaque: false };

/** A word once expanded: what it carries, and what the checks need to know of it. */
export interface Expanded {
  word: Word;
  /** Everything the word's value may carry. */
  taint: Taint;
  /** What each part carries, by index. */
  parts: Taint[];
  /** The word's text when it is all literal (quotes removed), else undefined. */
  literal: string | undefined;
  /** What the word begins with when that is a value rather than the author's text. */
  lead: Taint;
  /** That leading value is split into words (unquoted). */
  leadSplit: boolean;
  /** What process substitutions in the word produce. */
  processes: Taint;
}

/** The hints every construct shares; `{value}` stands for the value's template. */
export const HINTS = {
  integer:
    'Pass an integer (an input of type="integer" always is one), or compare as text: [ "$x" = 5 ].',
  name: 'Name the variable in the directive and assign the value to it: x={value}.',
  shell: `Pass the value to the script as an argument instead of inside it: sh -c 'echo "$1"' _ {value}.`,
  stdin: `Give the script its values as arguments, not inside the text it reads: bash -s -- {value} <<'EOF' … "$1" … EOF.`,
  program:
    'Name the program in the directive, and choose among a few with a condition (<when expr="inputs.tool = \'gzip\'" to="…"/>).',
  code: 'Pass the value to the program as data (an argument, an environment variable, a file), not inside its program text.',
};

/** How to keep a value from being an option of `program`. */
export function optionHint(program: string): string {
  return `Write -- before it (${program} … -- {value}) so that it cannot be taken for an option, or mark the <param> allow_options="true" if its values are meant to be options.`;
}

/** The moves a program's rule makes on the analysis of the script it stands in. */
export interface AnalysisScope {
  /** Whatever `taint` carries must have `shape` (`construct` says where, `hint` how to fix). */
  need(taint: Taint, shape: ValueShape, construct: string, hint: string): void;
  /** Whatever `taint` carries flows into variable `name`. */
  flow(taint: Taint, name: string): void;
  /** Whatever `taint` carries lands in the file at `path` (undefined: a path not known). */
  writeFile(path: string | undefined, taint: Taint): void;
  /** Analyses `words` as a command of their own (what a prefix runs); returns its output. */
  run(words: readonly Expanded[], stdin: Stdin): Taint;
  /** `words`, joined by spaces, are read again as shell code. */
  reparse(words: readonly Expanded[], construct: string): void;
  /** `text` is read again as shell code. */
  reparseVisible(text: Visible, construct: string): void;
  /**
   * The option rule over `args` of `program`: getopt-style (options anywhere before `--`),
   * builtin-style (before the first operand), or none; `argumentsOf` says how many arguments an
   * option takes.
   */
  options(
    program: string,
    args: readonly Expanded[],
    style: 'getopt' | 'builtin' | 'none',
    argumentsOf?: (option: string) => number,
  ): void;
  /** `word` is read as arithmetic. */
  arithUse(word: Expanded, construct: string): void;
  /** `word` names a variable. */
  nameUse(word: Expanded, construct: string): void;
  /** Reads `a` as an assignment (`NAME=value`, …); false when it is none. */
  assignment(
    a: Expanded,
    how: { integer?: boolean; nameref?: boolean; assoc?: boolean; construct?: string },
  ): boolean;
}
