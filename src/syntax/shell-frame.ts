/**
 * The contexts the shell scanner keeps on its stack while it reads a template (see `shellSlots`).
 */
import type { ShellSlot } from './shell-slot.js';

/** A character of the template, or (a number) the index of a slot. */
export type Unit = string | number;

/** The state of one command context: the whole text, `$(…)`, `` `…` `` or `<(…)`. */
export interface Cmd {
  kind: 'cmd';
  /** What ends this context: `)` for `$(`, a backquote, or nothing (the text's end). */
  close: ')' | '`' | undefined;
  /** `(` opened inside (subshells) and not closed yet. */
  parens: number;
  /** The word being read (slots as NUL), or undefined between words. */
  word: string | undefined;
  /** The slots of the word being read. */
  wordSlots: ShellSlot[];
  /** The next word names the program (or is an assignment or a reserved word). */
  commandPos: boolean;
  /** The next word is the target of a redirection. */
  redirect: boolean;
  /** Words from here on are parsed again by this command. */
  reparse: string | undefined;
  /** When set, only this many more words are parsed again (the script after `sh -c`). */
  reparseWords: number | undefined;
  /** A shell program named in this command, whose `-c` makes the next word code. */
  shell: string | undefined;
  /** `let`: its words are arithmetic. */
  arith: boolean;
  /** Inside `[[ … ]]`: its words, operators and slots by word. */
  bracket: { words: number; ops: number[]; slots: [number, ShellSlot][] } | undefined;
  /** Inside `NAME[…]` of an assignment: an arithmetic subscript. */
  subscript: boolean;
  /** Here-documents whose bodies start after the next newline. */
  heredocs: Heredoc[];
}

/** A here-document announced by `<<` or `<<-`. */
export interface Heredoc {
  delimiter: string;
  quoted: boolean;
  /** `<<-`: leading tabs are stripped from body lines (and the delimiter line). */
  strip: boolean;
}

/**
 * One context of the scan: a command, a quoted string, a comment, arithmetic, `${…}` or a
 * here-document body.
 */
export type Frame =
  | Cmd
  | { kind: 'single' }
  | { kind: 'ansi' }
  | { kind: 'double' }
  | { kind: 'comment' }
  | { kind: 'arith'; parens: number; close: '))' | ']' }
  | { kind: 'param'; braces: number; subscript: boolean }
  | (Heredoc & { kind: 'heredoc'; line: string; queue: Heredoc[] });

/** A fresh command context, ended by `close` (`)`, a backquote, or the text's end). */
export function newCmd(close: Cmd['close']): Cmd {
  return {
    kind: 'cmd',
    close,
    parens: 0,
    word: undefined,
    wordSlots: [],
    commandPos: true,
    redirect: false,
    reparse: undefined,
    reparseWords: undefined,
    shell: undefined,
    arith: false,
    bracket: undefined,
    subscript: false,
    heredocs: [],
  };
}
