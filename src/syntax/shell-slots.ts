/**
 * Where each value of a shell template lands. A template is text written by a directive's author
 * with slots for values: `echo 'Hello, {input:name}!'` is the texts `["echo 'Hello, ", "!'"]` and
 * one slot between them. Bash reads the text; this scanner follows bash's quoting (single and
 * double quotes, `$'…'`, here-documents, comments, `$(…)`, backquotes, `${…}`, arithmetic) and
 * the shape of simple commands, to tell for each slot how a reference to a variable must be
 * written there so that the value stays one piece of data ({@link ShellQuoting}), and whether bash
 * would still read the value as code there (arithmetic, `eval`, `sh -c`). Pure: no I/O.
 *
 * It is a reader of quoting, not a full shell parser: `case` patterns inside `$(…)` and a few rarer
 * forms may be misread, which can only make a value's rendering wrong, never let it run as code,
 * since a value always reaches bash as a variable's expansion (see `shell-render.ts`).
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

/** A character of the template, or (a number) the index of a slot. */
type Unit = string | number;

/** The state of one command context: the whole text, `$(…)`, `` `…` `` or `<(…)`. */
interface Cmd {
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

interface Heredoc {
  delimiter: string;
  quoted: boolean;
  /** `<<-`: leading tabs are stripped from body lines (and the delimiter line). */
  strip: boolean;
}

type Frame =
  | Cmd
  | { kind: 'single' }
  | { kind: 'ansi' }
  | { kind: 'double' }
  | { kind: 'comment' }
  | { kind: 'arith'; parens: number; close: '))' | ']' }
  | { kind: 'param'; braces: number; subscript: boolean }
  | (Heredoc & { kind: 'heredoc'; line: string; queue: Heredoc[] });

/** Programs that parse all their arguments as shell code again. */
const REPARSE_PROGRAMS = new Set(['eval', 'ssh', 'watch']);
/** Programs whose `-c` option takes a script. */
const SHELLS = new Set([
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
const BEFORE_COMMAND = new Set([
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
const BEFORE_DATA = new Set(['case', 'for', 'select', 'in', 'function']);
/** Operators of `[[ ]]` whose operands bash evaluates as arithmetic. */
const ARITH_OPS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
const ASSIGNMENT = /^[A-Za-z_]\w*(\[[^\]]*\])?\+?=/;
/** The start of an assignment: `NAME=`, `NAME+=` or `NAME[` (its subscript). */
const ASSIGNING = /^[A-Za-z_]\w*(\[|\+?=)/;
const NAME = /^[A-Za-z_]\w*$/;

/** The slots of the template made of `texts` (one more text than slots), in order. */
export function shellSlots(texts: readonly string[]): ShellSlot[] {
  return new Scanner(texts).scan();
}

class Scanner {
  private readonly units: Unit[] = [];
  private readonly slots: ShellSlot[] = [];
  private readonly stack: Frame[] = [newCmd(undefined)];
  private i = 0;

  constructor(texts: readonly string[]) {
    texts.forEach((text, index) => {
      for (const ch of text) this.units.push(ch);
      if (index < texts.length - 1) this.units.push(index);
    });
  }

  scan(): ShellSlot[] {
    for (this.i = 0; this.i < this.units.length; this.i++) {
      const u = this.units[this.i]!;
      const f = this.stack[this.stack.length - 1]!;
      switch (f.kind) {
        case 'cmd':
          this.inCmd(f, u);
          break;
        case 'single':
        case 'ansi':
          if (typeof u === 'number') this.record(u, this.quoted(f.kind));
          else if (u === "'") this.stack.pop();
          else if (u === '\\' && f.kind === 'ansi') this.skipEscaped();
          break;
        case 'double':
          this.inDouble(u);
          break;
        case 'comment':
          if (typeof u === 'number') this.record(u, this.quoted('comment'));
          else if (u === '\n') {
            this.stack.pop();
            this.i--; // the newline ends the command too
          }
          break;
        case 'arith':
          this.inArith(f, u);
          break;
        case 'param':
          this.inParam(f, u);
          break;
        case 'heredoc':
          this.inHeredoc(f, u);
          break;
      }
    }
    // The text ends every command still open: a `[[ … ]]` at the very end settles its operands.
    for (const f of this.stack) if (f.kind === 'cmd') this.endCommand(f);
    return this.slots;
  }

  private peek(k = 1): Unit | undefined {
    return this.units[this.i + k];
  }

  /** Steps over the character a backslash escapes (never over a slot: a value is never escaped). */
  private skipEscaped(): void {
    if (typeof this.peek() === 'string') this.i++;
  }

  /** The innermost command context. */
  private cmd(): Cmd {
    for (let j = this.stack.length - 1; j >= 0; j--) {
      const f = this.stack[j]!;
      if (f.kind === 'cmd') return f;
    }
    return this.stack[0] as Cmd;
  }

  private record(index: number, slot: ShellSlot): void {
    this.slots[index] = slot;
    const c = this.cmd();
    if (c.word !== undefined) c.wordSlots.push(slot);
  }

  /** A slot inside quotes (or a comment, or a here-document) of the innermost command. */
  private quoted(quoting: ShellQuoting): ShellSlot {
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

  private inCmd(c: Cmd, u: Unit): void {
    if (typeof u === 'number') {
      const starts = c.word === undefined;
      this.startWord(c);
      this.record(u, {
        quoting: 'none',
        arithmetic: c.arith || c.subscript,
        reparsedBy: c.reparse,
        program: c.commandPos && !c.redirect && !ASSIGNING.test(c.word!),
        wholeWord: starts && this.isBoundary(this.peek(), c),
      });
      c.word += '\0';
      return;
    }
    switch (u) {
      case ' ':
      case '\t':
        return this.endWord(c);
      case '\n':
        this.endCommand(c);
        return this.startHeredocs(c);
      case ';':
        return this.endCommand(c);
      case '&':
        if (this.peek() === '>') return this.redirection(c);
        if (this.peek() === '&') this.i++;
        return this.endCommand(c);
      case '|':
        if (this.peek() === '|' || this.peek() === '&') this.i++;
        return this.endCommand(c);
      case '<':
      case '>':
        return this.angle(c, u);
      case '(':
        if (c.commandPos && c.word === undefined && this.peek() === '(') {
          this.i++;
          this.stack.push({ kind: 'arith', parens: 0, close: '))' });
          return;
        }
        this.endWord(c);
        c.parens++;
        return this.endCommand(c);
      case ')':
        if (c.parens > 0) {
          c.parens--;
          return this.endCommand(c);
        }
        if (c.close === ')') {
          this.endWord(c);
          this.stack.pop();
          return;
        }
        return this.endCommand(c); // a `case` pattern: a command follows
      case '`':
        if (c.close === '`') {
          this.endWord(c);
          this.stack.pop();
          return;
        }
        this.startWord(c);
        this.stack.push(newCmd('`'));
        return;
      case "'":
        this.startWord(c);
        this.stack.push({ kind: 'single' });
        return;
      case '"':
        this.startWord(c);
        this.stack.push({ kind: 'double' });
        return;
      case '\\':
        if (this.peek() === '\n') {
          this.i++; // a line continuation
          return;
        }
        this.startWord(c);
        if (typeof this.peek() === 'string') c.word += this.units[++this.i] as string;
        return;
      case '#':
        if (c.word === undefined) {
          this.stack.push({ kind: 'comment' });
          return;
        }
        c.word += u;
        return;
      case '$':
        this.startWord(c);
        if (this.peek() === "'") {
          this.i++;
          this.stack.push({ kind: 'ansi' });
          return;
        }
        if (this.peek() === '"') {
          this.i++;
          this.stack.push({ kind: 'double' });
          return;
        }
        if (!this.dollar()) c.word += u;
        return;
      case '[':
        this.startWord(c);
        if (c.commandPos && NAME.test(c.word!)) c.subscript = true;
        c.word += u;
        return;
      case ']':
        this.startWord(c);
        c.subscript = false;
        c.word += u;
        return;
      default:
        this.startWord(c);
        c.word += u;
    }
  }

  private inDouble(u: Unit): void {
    if (typeof u === 'number') this.record(u, this.quoted('double'));
    else if (u === '"') this.stack.pop();
    else if (u === '\\') this.skipEscaped();
    else if (u === '$') this.dollar();
    else if (u === '`') this.stack.push(newCmd('`'));
  }

  private inArith(f: Extract<Frame, { kind: 'arith' }>, u: Unit): void {
    if (typeof u === 'number') {
      this.record(u, { ...this.quoted('none'), arithmetic: true, program: false });
      return;
    }
    if (u === '(') f.parens++;
    else if (u === ')') {
      if (f.close === '))' && f.parens === 0 && this.peek() === ')') {
        this.i++;
        this.stack.pop();
      } else f.parens = Math.max(0, f.parens - 1);
    } else if (u === ']' && f.close === ']') this.stack.pop();
    else if (u === '$') this.dollar();
    else if (u === '`') this.stack.push(newCmd('`'));
  }

  private inParam(f: Extract<Frame, { kind: 'param' }>, u: Unit): void {
    const enclosing = this.enclosingQuoting();
    if (typeof u === 'number') {
      const slot = { ...this.quoted(enclosing), wholeWord: false };
      this.record(u, f.subscript ? { ...slot, arithmetic: true } : slot);
      return;
    }
    if (u === '}') {
      if (f.braces === 0) this.stack.pop();
      else f.braces--;
    } else if (u === '{') f.braces++;
    else if (u === '[') f.subscript = true;
    else if (u === ']') f.subscript = false;
    else if (u === '\\') this.skipEscaped();
    else if (u === '$') this.dollar();
    else if (u === '`') this.stack.push(newCmd('`'));
    else if (u === '"') this.stack.push({ kind: 'double' });
    else if (u === "'" && enclosing === 'none') this.stack.push({ kind: 'single' });
  }

  private inHeredoc(f: Extract<Frame, { kind: 'heredoc' }>, u: Unit): void {
    if (typeof u === 'number') {
      f.line += '\0';
      const slot = this.quoted(f.quoted ? 'heredoc-quoted' : 'heredoc');
      this.record(u, f.quoted ? { ...slot, delimiter: f.delimiter } : slot);
      return;
    }
    if (u === '\n') {
      const line = f.strip ? f.line.replace(/^\t+/, '') : f.line;
      f.line = '';
      if (line === f.delimiter) {
        this.stack.pop();
        const [next, ...rest] = f.queue;
        if (next !== undefined)
          this.stack.push({ ...next, kind: 'heredoc', line: '', queue: rest });
      }
      return;
    }
    f.line += u;
    if (f.quoted) return;
    if (u === '\\') {
      const next = this.peek();
      if (typeof next === 'string') f.line += next;
      this.skipEscaped();
    } else if (u === '$') this.dollar();
    else if (u === '`') this.stack.push(newCmd('`'));
  }

  /** After a `$`: opens `$((`, `$(`, `${` or `$[`; false when the `$` is just a character. */
  private dollar(): boolean {
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
  private enclosingQuoting(): ShellQuoting {
    for (let j = this.stack.length - 2; j >= 0; j--) {
      const f = this.stack[j]!;
      if (f.kind === 'double') return 'double';
      if (f.kind === 'heredoc') return f.quoted ? 'heredoc-quoted' : 'heredoc';
      if (f.kind === 'cmd') return 'none';
    }
    return 'none';
  }

  /** `<`, `>` and what follows: a process substitution, a here-document or a redirection. */
  private angle(c: Cmd, u: '<' | '>'): void {
    if (this.peek() === '(') {
      this.startWord(c);
      this.i++;
      this.stack.push(newCmd(')'));
      return;
    }
    if (u === '<' && this.peek() === '<' && this.peek(2) !== '<') {
      this.i++;
      this.heredoc(c);
      return;
    }
    this.redirection(c);
  }

  /** A redirection operator (`>`, `>>`, `2>&1`, `&>`, `<<<`, …): the next word is its target. */
  private redirection(c: Cmd): void {
    // A word of digits just before the operator is the file descriptor, not a word.
    if (c.word !== undefined && /^\d+$/.test(c.word)) c.word = undefined;
    this.endWord(c);
    while ('<>&|'.includes(String(this.peek()))) this.i++;
    c.redirect = true;
  }

  /** `<<` (or `<<-`) and its delimiter word; the body starts after the next newline. */
  private heredoc(c: Cmd): void {
    this.endWord(c);
    let strip = false;
    if (this.peek() === '-') {
      strip = true;
      this.i++;
    }
    while (this.peek() === ' ' || this.peek() === '\t') this.i++;
    let delimiter = '';
    let quoted = false;
    let quote: string | undefined;
    for (let next = this.peek(); next !== undefined; next = this.peek()) {
      if (typeof next === 'number') {
        // A value in the delimiter: no line can be known to end the body.
        this.record(next, this.quoted('none'));
        delimiter += '\0';
        quoted = true;
      } else if (quote !== undefined) {
        if (next === quote) quote = undefined;
        else delimiter += next;
      } else if (next === "'" || next === '"') {
        quote = next;
        quoted = true;
      } else if (next === '\\') {
        quoted = true;
      } else if (' \t\n;&|<>()'.includes(next)) break;
      else delimiter += next;
      this.i++;
    }
    c.heredocs.push({ delimiter, quoted, strip });
  }

  private startHeredocs(c: Cmd): void {
    const [first, ...rest] = c.heredocs;
    c.heredocs = [];
    if (first !== undefined) this.stack.push({ ...first, kind: 'heredoc', line: '', queue: rest });
  }

  private startWord(c: Cmd): void {
    if (c.word === undefined) {
      c.word = '';
      c.wordSlots = [];
    }
  }

  /** Whether `u` ends the word a slot stands in. */
  private isBoundary(u: Unit | undefined, c: Cmd): boolean {
    if (u === undefined) return true;
    if (typeof u === 'number') return false;
    return ' \t\n;&|<>'.includes(u) || (u === ')' && (c.parens > 0 || c.close === ')'));
  }

  private endWord(c: Cmd): void {
    const word = c.word;
    if (word === undefined) return;
    c.word = undefined;
    if (c.redirect) {
      c.redirect = false;
      return;
    }
    if (c.bracket !== undefined) return this.bracketWord(c, word);
    if (c.reparseWords !== undefined && --c.reparseWords <= 0) {
      c.reparse = undefined;
      c.reparseWords = undefined;
    }
    if (c.commandPos) {
      if (ASSIGNMENT.test(word) || BEFORE_COMMAND.has(word)) return;
      c.commandPos = false;
      if (BEFORE_DATA.has(word)) return;
      if (word === '[[') {
        c.bracket = { words: 0, ops: [], slots: [] };
        return;
      }
      const name = programName(word);
      if (REPARSE_PROGRAMS.has(name)) c.reparse = name;
      else if (name === 'let') c.arith = true;
      else if (SHELLS.has(name)) c.shell = name;
      return;
    }
    const name = programName(word);
    if (c.reparse !== undefined) return;
    if (SHELLS.has(name)) c.shell = name;
    else if (c.shell !== undefined && /^-[A-Za-z]*c[A-Za-z]*$/.test(word)) {
      c.reparse = `${c.shell} -c`;
      c.reparseWords = 1;
    }
  }

  /** A word inside `[[ … ]]`; at `]]`, the operands of arithmetic operators become arithmetic. */
  private bracketWord(c: Cmd, word: string): void {
    const b = c.bracket!;
    if (word !== ']]') {
      if (ARITH_OPS.has(word)) b.ops.push(b.words);
      for (const slot of c.wordSlots) b.slots.push([b.words, slot]);
      b.words++;
      return;
    }
    for (const [at, slot] of b.slots) {
      if (b.ops.includes(at - 1) || b.ops.includes(at + 1)) slot.arithmetic = true;
    }
    c.bracket = undefined;
  }

  /** Ends the simple command: the next word names a program again. */
  private endCommand(c: Cmd): void {
    this.endWord(c);
    c.commandPos = true;
    c.redirect = false;
    c.reparse = undefined;
    c.reparseWords = undefined;
    c.shell = undefined;
    c.arith = false;
    c.subscript = false;
    if (c.bracket !== undefined) this.bracketWord(c, ']]');
  }
}

function newCmd(close: Cmd['close']): Cmd {
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

/** `/usr/bin/env` → `env`; quotes and slots removed. */
function programName(word: string): string {
  const plain = word.replace(/["'\\]/g, '');
  return plain.slice(plain.lastIndexOf('/') + 1);
}
