/**
 * Where the shell scanner is in a template: the template's units, the stack of open contexts, the
 * slots found so far, and the moves every context shares (peeking ahead, opening `$…` forms,
 * recording a slot).
 */
import { newCmd, type Cmd, type Frame, type Unit } from './shell-frame.js';
import type { ShellQuoting, ShellSlot } from './shell-slot.js';
import { ASSIGNING } from './shell-words.js';

/** The state of one scan of a template (see `shellSlots`). */
export class ShellCursor {
  /** The template: its characters, and each slot as its index. */
  readonly units: Unit[] = [];
  /** What was found about each slot, by index. */
  readonly slots: ShellSlot[] = [];
  /** The open contexts, innermost last; the text itself at the bottom. */
  readonly stack: Frame[] = [newCmd(undefined)];
  /** The unit being read. */
  i = 0;

  constructor(texts: readonly string[]) {
    texts.forEach((text, index) => {
      for (const ch of text) this.units.push(ch);
      if (index < texts.length - 1) this.units.push(index);
    });
  }

  /** The unit `k` places ahead of the one being read. */
  peek(k = 1): Unit | undefined {
    return this.units[this.i + k];
  }

  /** Steps over the character a backslash escapes (never over a slot: a value is never escaped). */
  skipEscaped(): void {
    if (typeof this.peek() === 'string') this.i++;
  }

  /** The innermost command context. */
  cmd(): Cmd {
    for (let j = this.stack.length - 1; j >= 0; j--) {
      const f = this.stack[j]!;
      if (f.kind === 'cmd') return f;
    }
    return this.stack[0] as Cmd;
  }

  /** Keeps what was found about slot `index`, as part of the word being read if any. */
  record(index: number, slot: ShellSlot): void {
    this.slots[index] = slot;
    const c = this.cmd();
    if (c.word !== undefined) c.wordSlots.push(slot);
  }

  /** A slot inside quotes (or a comment, or a here-document) of the innermost command. */
  quoted(quoting: ShellQuoting): ShellSlot {
    const c = this.cmd();
    return {
      quoting,
      arithmetic: c.arith,
      reparsedBy: c.reparse,
      program:
        quoting !== 'comment' &&
        c.commandPos &&
        !c.redirect &&
        c.word !== undefined &&
        !ASSIGNING.test(c.word),
      wholeWord: false,
    };
  }

  /** After a `$`: opens `$((`, `$(`, `${` or `$[`; false when the `$` is just a character. */
  dollar(): boolean {
    const next = this.peek();
    if (next === '(' && this.peek(2) === '(') {
      this.i += 2;
      this.stack.push({ kind: 'arith', parens: 0, close: '))' });
    } else if (next === '(') {
      this.i++;
      this.stack.push(newCmd(')'));
    } else if (next === '{') {
      this.i++;
      this.stack.push({ kind: 'param', braces: 0, subscript: false });
    } else if (next === '[') {
      this.i++;
      this.stack.push({ kind: 'arith', parens: 0, close: ']' });
    } else return false;
    return true;
  }

  /** How the text around a `${…}` is quoted: it decides how a slot inside it is written. */
  enclosingQuoting(): ShellQuoting {
    for (let j = this.stack.length - 2; j >= 0; j--) {
      const f = this.stack[j]!;
      if (f.kind === 'double') return 'double';
      if (f.kind === 'heredoc') return f.quoted ? 'heredoc-quoted' : 'heredoc';
      if (f.kind === 'cmd') return 'none';
    }
    return 'none';
  }

  /** Starts a word in `c` unless one is being read. */
  startWord(c: Cmd): void {
    if (c.word === undefined) {
      c.word = '';
      c.wordSlots = [];
    }
  }

  /** Whether `u` ends the word a slot stands in. */
  isBoundary(u: Unit | undefined, c: Cmd): boolean {
    if (u === undefined) return true;
    if (typeof u === 'number') return false;
    return ' \t\n;&|<>'.includes(u) || (u === ')' && (c.parens > 0 || c.close === ')'));
  }

  /** At a newline: the bodies of the here-documents announced on the line start. */
  startHeredocs(c: Cmd): void {
    const [first, ...rest] = c.heredocs;
    c.heredocs = [];
    if (first !== undefined) this.stack.push({ ...first, kind: 'heredoc', line: '', queue: rest });
  }
}
