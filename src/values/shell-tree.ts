/**
 * What `readShell` makes of shell text: lists of pipelines of commands, words made of parts
 * (literal text, expansions, and holes where values stand). It is bash's grammar as far as the
 * analysis of values needs it (`shell-analysis.ts`): quoting, expansions, simple and compound
 * commands, pipelines, redirections and here-documents.
 */

/**
 * A character of the text read, or a hole: where a value stands (a template's slot; in text that
 * bash reads again, an expansion of the text around it).
 */
export type ShellUnit = string | { readonly hole: number };

/** The quoting a hole stands in, which decides how a variable reference is written there. */
export type ShellQuoting =
  | 'none'
  | 'double'
  | 'single'
  | 'ansi'
  | 'heredoc'
  | 'heredoc-quoted'
  | 'comment';

/** One part of a word. */
export type WordPart =
  /** Literal text, quotes removed; `quoted` when it stood in quotes or after a backslash. */
  | { kind: 'text'; text: string; quoted: boolean }
  | { kind: 'hole'; hole: number; quoting: ShellQuoting }
  | { kind: 'param'; param: ParamExpansion; quoted: boolean }
  /** `$(…)` or a backquoted command: its output. */
  | { kind: 'command'; body: CommandList; quoted: boolean }
  /** `<(…)` or `>(…)`: the name of a pipe to or from the command. */
  | { kind: 'process'; body: CommandList }
  /** `$((…))` or `$[…]`: an integer. */
  | { kind: 'arith'; expr: Word }
  /** An identifier inside arithmetic: bash reads that variable's value as arithmetic too. */
  | { kind: 'name'; name: string }
  /** The `(…)` of an array assignment `NAME=(…)`. */
  | { kind: 'array'; elements: Word[] };

/** A word: what bash expands into one argument (or several, through word splitting). */
export interface Word {
  parts: WordPart[];
}

/** A parameter expansion: `$x`, `${x}`, `${x:-y}`, `${#x}`, `${!x}`, `${x[i]}`, `${x@P}`, …. */
export interface ParamExpansion {
  /** The variable: a name, a digit string (positional), or one of `@ * # ? - $ ! 0`. */
  name: string;
  /** Where the name itself is a hole (`${…}` around a value, in text read again). */
  nameHole?: number;
  /** `${!x}`: the variable named by x's value. */
  indirect: boolean;
  /** `${#x}`: a length. */
  length: boolean;
  /** `${x[…]}`. */
  subscript?: Word;
  /** What follows the name: `:-`, `=`, `#`, `//`, `^^`, `:` (a substring), `@` (a transformation), …. */
  op?: string;
  /** The word after {@link op}; for `:` the offset and length (arithmetic). */
  operand?: Word;
}

/** A redirection: `>`, `>>`, `<`, `<<<`, `>&`, `<<` (a here-document), …. */
export interface Redirect {
  op: string;
  /** The file descriptor written before the operator (`2>`, `3<<<`, `{fd}>`), if any. */
  fd?: string;
  target?: Word;
  heredoc?: HereDoc;
}

/** A here-document, its body read after the line that announced it. */
export interface HereDoc {
  /** The delimiter was quoted: the body is taken as it is, nothing expanded. */
  quoted: boolean;
  /** `<<-`: leading tabs are stripped from body lines and the delimiter line. */
  strip: boolean;
  delimiter: string;
  /** Holes in the delimiter: no line can be known to end the body. */
  delimiterHoles: number[];
  body: Word;
}

/** A simple command: words (leading assignments included) and redirections. */
export interface SimpleCommand {
  kind: 'simple';
  words: Word[];
  redirects: Redirect[];
}

/**
 * A compound command. `keyword` says which: `if`, `while`, `until`, `{`, `(` (their lists in
 * `lists`); `for` and `select` (`name`, the words after `in`, the body); `case` (the subject
 * then each pattern in `words`, each branch in `lists`); `((` and `for ((` (`arith`); `[[` (its
 * words, operators included); `function` (`name`, the body as the only command of `lists[0]`).
 */
export interface CompoundCommand {
  kind: 'compound';
  keyword: string;
  name?: string;
  words: Word[];
  arith: Word[];
  lists: CommandList[];
  redirects: Redirect[];
}

export type Command = SimpleCommand | CompoundCommand;

/** Commands joined by `|`: each one's output is the next one's input. */
export interface Pipeline {
  commands: Command[];
}

/** Pipelines joined by `;`, `&`, `&&`, `||` or newlines. */
export interface CommandList {
  pipelines: Pipeline[];
}

/** What the reader found about each hole, by index: how a value must be written there. */
export interface HoleSite {
  quoting: ShellQuoting;
  /** It stands in arithmetic text: written bare (`${V}`), not in quotes. */
  arithmetic: boolean;
  /** Unquoted and a word of its own: a list becomes one word per element. */
  wholeWord: boolean;
  /** For `heredoc-quoted`: the delimiter that would end the here-document. */
  delimiter?: string;
}
