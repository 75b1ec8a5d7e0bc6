/**
 * What the shell scanner tells about each slot of a template: the quoting it stands in and whether
 * bash would read a value there as code.
 */

/** The quoting a slot stands in, which decides how a variable reference is written there. */
export type ShellQuoting =
  | 'none'
  | 'double'
  | 'single'
  | 'ansi'
  | 'heredoc'
  | 'heredoc-quoted'
  | 'comment';

/** What the scanner found about one slot. */
export interface ShellSlot {
  quoting: ShellQuoting;
  /**
   * Bash evaluates the text as arithmetic here (`$(( ))`, `(( ))`, `let`, the operands of
   * `[[ -eq ]]` and friends, an array subscript), which runs command substitutions hidden in a
   * value: only integers are safe.
   */
  arithmetic: boolean;
  /**
   * The command that parses this text as shell code once more (`eval`, `sh -c`, `ssh`, `watch`),
   * or undefined. There only plain words are safe.
   */
  reparsedBy: string | undefined;
  /** The slot is (part of) the name of the program a simple command runs. */
  program: boolean;
  /** Unquoted and a word of its own (blanks or operators around it): a list becomes several words. */
  wholeWord: boolean;
  /** For `heredoc-quoted`: the delimiter that would end the here-document. */
  delimiter?: string;
}
