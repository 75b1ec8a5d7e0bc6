/**
 * Reads shell text with holes (`ShellUnit`s) into a tree (`shell-tree.ts`), following bash's
 * grammar: quoting (single and double quotes, `$'…'`, backslashes), expansions (`$x`, `${…}`,
 * `$(…)`, backquotes, `$((…))`, `$[…]`, `<(…)`), simple commands with their assignments and
 * redirections, pipelines, lists, here-documents, and the compound commands (`if`, `while`,
 * `until`, `for`, `select`, `case`, `{ }`, `( )`, `(( ))`, `[[ ]]`, functions). Pure; it never
 * throws: text bash would refuse is read as best it can be, since a value's safety never rests
 * on the reading alone (a value always reaches bash as a variable's expansion).
 */
import type {
  Command,
  CommandList,
  CompoundCommand,
  HereDoc,
  HoleSite,
  ParamExpansion,
  Pipeline,
  Redirect,
  ShellQuoting,
  ShellUnit,
  SimpleCommand,
  Word,
  WordPart,
} from './shell-tree.js';

/**
 * The tree of `units`, and what was found about each hole. `tooDeep` is set when the text nests
 * lists deeper than {@link MAX_NESTING} (`$( $( $( …`): it is not read past that point.
 */
export function readShell(units: readonly ShellUnit[]): {
  list: CommandList;
  holes: HoleSite[];
  tooDeep: boolean;
} {
  const reader = new ShellReader(units, 0);
  const list = reader.list(() => false);
  return { list, holes: reader.holes, tooDeep: reader.tooDeep };
}

/** How deep lists may nest (subshells, command substitutions, compound commands). */
export const MAX_NESTING = 64;

/** Characters that end an unquoted word. */
const META = new Set([' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')']);
const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_]/;
/** The operators of `${name…}`, longest first. */
const PARAM_OPS = [
  ':-',
  ':=',
  ':?',
  ':+',
  '##',
  '%%',
  '//',
  '/#',
  '/%',
  '^^',
  ',,',
  '-',
  '=',
  '?',
  '+',
  '#',
  '%',
  '/',
  '^',
  ',',
  '@',
  ':',
];
/** Redirection operators, longest first (`<<` and `<<-` announce a here-document). */
const REDIRECT_OPS = ['&>>', '<<<', '<<-', '&>', '<<', '<>', '<&', '>>', '>&', '>|', '<', '>'];

/** A here-document announced on the current line, waiting for its body. */
interface Pending {
  heredoc: HereDoc;
}

class ShellReader {
  readonly holes: HoleSite[] = [];
  /** Lists nested deeper than {@link MAX_NESTING}: the rest of the text was not read. */
  tooDeep = false;
  private i = 0;
  private pending: Pending[] = [];

  constructor(
    private readonly units: readonly ShellUnit[],
    /** How many lists enclose the one being read. */
    private depth: number,
  ) {}

  // ---- lists, pipelines, commands --------------------------------------------------------

  /** Pipelines until the end of the text, or until `end` says the enclosing construct ends. */
  list(end: () => boolean): CommandList {
    const pipelines: Pipeline[] = [];
    if (this.depth >= MAX_NESTING || this.tooDeep) {
      this.tooDeep = true;
      this.i = this.units.length;
      return { pipelines };
    }
    this.depth++;
    try {
      return this.pipelines(end, pipelines);
    } finally {
      this.depth--;
    }
  }

  private pipelines(end: () => boolean, pipelines: Pipeline[]): CommandList {
    for (;;) {
      this.separators();
      if (this.atEnd() || end()) break;
      const before = this.i;
      pipelines.push(this.pipeline(end));
      if (this.i === before) this.i++; // never stall on text bash would refuse
    }
    return { pipelines };
  }

  /** Blanks, newlines (and the here-document bodies they start), `;`, `&`, `&&`, `||`, comments. */
  private separators(): void {
    for (;;) {
      const u = this.peek();
      if (u === ' ' || u === '\t') this.i++;
      else if (u === '\n') this.newline();
      else if (u === '#') this.comment();
      else if (u === ';' && this.peek(1) !== ';' && this.peek(1) !== '&') this.i++;
      else if (u === '&' && this.peek(1) !== '>') this.i += this.peek(1) === '&' ? 2 : 1;
      else if (u === '|' && this.peek(1) === '|') this.i += 2;
      else if (u === '\\' && this.peek(1) === '\n') this.i += 2;
      else return;
    }
  }

  private pipeline(end: () => boolean): Pipeline {
    const commands: Command[] = [];
    this.blanks();
    // `!` and `time [-p]` stand before a pipeline.
    for (let word = this.reservedAhead(); word === '!' || word === 'time'; ) {
      this.i += word.length;
      this.blanks();
      if (word === 'time' && this.peek() === '-' && this.peek(1) === 'p') this.i += 2;
      this.blanks();
      word = this.reservedAhead();
    }
    for (;;) {
      if (this.atEnd() || end()) break;
      commands.push(this.command(end));
      this.blanks();
      if (this.peek() === '|' && this.peek(1) !== '|') {
        this.i += this.peek(1) === '&' ? 2 : 1;
        while (this.peek() === ' ' || this.peek() === '\t' || this.peek() === '\n') {
          if (this.peek() === '\n') this.newline();
          else this.i++;
        }
        continue;
      }
      break;
    }
    return { commands };
  }

  private command(end: () => boolean): Command {
    this.blanks();
    if (this.peek() === '(') {
      if (this.peek(1) === '(') {
        this.i += 2;
        const expr = this.arith('))');
        return this.compound({ keyword: '((', arith: [expr] });
      }
      this.i++;
      const list = this.list(() => this.peek() === ')');
      if (this.peek() === ')') this.i++;
      return this.compound({ keyword: '(', lists: [list] });
    }
    const word = this.reservedAhead();
    switch (word) {
      case '{': {
        this.i++;
        const list = this.list(() => this.reservedAhead() === '}');
        if (this.reservedAhead() === '}') this.i++;
        return this.compound({ keyword: '{', lists: [list] });
      }
      case '[[':
        this.i += 2;
        return this.compound({ keyword: '[[', words: this.condWords() });
      case 'if':
      case 'while':
      case 'until':
        return this.conditional(word);
      case 'for':
      case 'select':
        return this.loop(word);
      case 'case':
        return this.caseCommand();
      case 'function': {
        this.i += word.length;
        this.blanks();
        const name = this.literalWord();
        this.blanks();
        if (this.peek() === '(' && this.peek(1) === ')') this.i += 2;
        return this.functionBody(name, end);
      }
    }
    const name = this.functionName();
    if (name !== undefined) return this.functionBody(name, end);
    return this.simple();
  }

  private compound(parts: Partial<CompoundCommand> & { keyword: string }): CompoundCommand {
    return {
      kind: 'compound',
      words: [],
      arith: [],
      lists: [],
      ...parts,
      redirects: this.redirects(),
    };
  }

  /** Redirections after a compound command. */
  private redirects(): Redirect[] {
    const redirects: Redirect[] = [];
    for (;;) {
      this.blanks();
      if (!this.redirectAhead()) return redirects;
      redirects.push(this.redirect());
    }
  }

  /** `if … then … [elif … then …] [else …] fi`, `while|until … do … done`. */
  private conditional(keyword: string): CompoundCommand {
    this.i += keyword.length;
    const lists: CommandList[] = [];
    const stops = keyword === 'if' ? ['then', 'elif', 'else', 'fi'] : ['do', 'done'];
    const last = keyword === 'if' ? 'fi' : 'done';
    for (let guard = 0; guard < 10_000; guard++) {
      lists.push(this.list(() => stops.includes(this.reservedAhead() ?? '')));
      const word = this.reservedAhead();
      if (word === undefined) break;
      this.i += word.length;
      if (word === last) break;
    }
    return this.compound({ keyword, lists });
  }

  /** `for NAME [in WORDS]; do …; done`, `for ((…;…;…)); do …; done`, `select …`. */
  private loop(keyword: string): CompoundCommand {
    this.i += keyword.length;
    this.blanks();
    if (this.peek() === '(' && this.peek(1) === '(') {
      this.i += 2;
      const expr = this.arith('))');
      return this.loopBody(`${keyword} ((`, { arith: [expr] });
    }
    const name = this.literalWord();
    const words: Word[] = [];
    this.blanksAndNewlines();
    if (this.reservedAhead() === 'in') {
      this.i += 2;
      for (;;) {
        this.blanks();
        const u = this.peek();
        if (u === undefined || u === ';' || u === '\n' || u === '&' || u === '|') break;
        if (u === ')' || u === '(') break;
        const before = this.i;
        words.push(this.word());
        if (this.i === before) break; // an operator bash would refuse here
      }
    }
    return this.loopBody(keyword, { name, words });
  }

  private loopBody(keyword: string, parts: Partial<CompoundCommand>): CompoundCommand {
    const lists: CommandList[] = [];
    this.separators();
    if (this.reservedAhead() === 'do') {
      this.i += 2;
      lists.push(this.list(() => this.reservedAhead() === 'done'));
      if (this.reservedAhead() === 'done') this.i += 4;
    } else if (this.reservedAhead() === '{') {
      this.i++;
      lists.push(this.list(() => this.reservedAhead() === '}'));
      if (this.reservedAhead() === '}') this.i++;
    }
    return this.compound({ keyword, ...parts, lists });
  }

  /** `case WORD in [(]PATTERN[|PATTERN]…) LIST ;; … esac`. */
  private caseCommand(): CompoundCommand {
    this.i += 4;
    this.blanks();
    const words: Word[] = [this.word()];
    const lists: CommandList[] = [];
    this.blanksAndNewlines();
    if (this.reservedAhead() === 'in') this.i += 2;
    for (let guard = 0; guard < 10_000; guard++) {
      this.separators();
      if (this.atEnd()) break;
      if (this.reservedAhead() === 'esac') {
        this.i += 4;
        break;
      }
      if (this.peek() === '(') this.i++;
      for (;;) {
        this.blanks();
        const u = this.peek();
        if (u === undefined || u === ')') break;
        if (u === '|') {
          this.i++;
          continue;
        }
        const before = this.i;
        words.push(this.word());
        if (this.i === before) this.i++;
      }
      if (this.peek() === ')') this.i++;
      lists.push(this.list(() => this.caseItemEnds() || this.reservedAhead() === 'esac'));
      if (this.caseItemEnds()) {
        this.i += this.peek(2) === '&' ? 3 : 2; // `;;`, `;&`, `;;&`
      }
    }
    return this.compound({ keyword: 'case', words, lists });
  }

  private caseItemEnds(): boolean {
    return this.peek() === ';' && (this.peek(1) === ';' || this.peek(1) === '&');
  }

  /** `NAME ()` at command position: the name of a function being defined, or undefined. */
  private functionName(): string | undefined {
    let j = this.i;
    let name = '';
    for (let u = this.units[j]; typeof u === 'string' && NAME_CHAR.test(u); u = this.units[++j])
      name += u;
    if (name === '') return undefined;
    while (this.units[j] === ' ' || this.units[j] === '\t') j++;
    if (this.units[j] !== '(') return undefined;
    j++;
    while (this.units[j] === ' ' || this.units[j] === '\t') j++;
    if (this.units[j] !== ')') return undefined;
    this.i = j + 1;
    return name;
  }

  private functionBody(name: string, end: () => boolean): CompoundCommand {
    this.blanksAndNewlines();
    const body = this.command(end);
    return {
      kind: 'compound',
      keyword: 'function',
      name,
      words: [],
      arith: [],
      lists: [{ pipelines: [{ commands: [body] }] }],
      redirects: [],
    };
  }

  /** A simple command: words and redirections, up to a control operator. */
  private simple(): SimpleCommand {
    const words: Word[] = [];
    const redirects: Redirect[] = [];
    for (;;) {
      this.blanks();
      const u = this.peek();
      if (u === undefined || u === '\n' || u === ';' || u === '|' || u === ')') break;
      if (u === '&' && this.peek(1) !== '>') break;
      if (u === '#') {
        // At the start of a word: a comment to the end of the line.
        this.comment();
        break;
      }
      if (this.redirectAhead()) {
        redirects.push(this.redirect());
        continue;
      }
      if (u === '(') {
        // `(` is no word here (bash refuses it); read past it.
        this.i++;
        continue;
      }
      const before = this.i;
      words.push(this.word());
      if (this.i === before) this.i++;
    }
    return { kind: 'simple', words, redirects };
  }

  /** The words of `[[ … ]]`, up to `]]`; its operators (`&&`, `<`, `(`, …) are words too. */
  private condWords(): Word[] {
    const words: Word[] = [];
    for (let guard = 0; guard < 100_000; guard++) {
      while (this.peek() === ' ' || this.peek() === '\t' || this.peek() === '\n') this.i++;
      if (this.atEnd()) break;
      if (this.peek() === ']' && this.peek(1) === ']') {
        this.i += 2;
        break;
      }
      const before = this.i;
      words.push(this.word(new Set([' ', '\t', '\n'])));
      if (this.i === before) this.i++;
    }
    return words;
  }

  // ---- redirections and here-documents ----------------------------------------------------

  /** Whether a redirection starts here: `[n]op`, `{name}op`, `&>`. */
  private redirectAhead(): boolean {
    let j = this.i;
    if (this.units[j] === '{') {
      j++;
      while (typeof this.units[j] === 'string' && NAME_CHAR.test(this.units[j] as string)) j++;
      if (this.units[j] !== '}') return false;
      j++;
    } else while (typeof this.units[j] === 'string' && /\d/.test(this.units[j] as string)) j++;
    const u = this.units[j];
    if (u === '&') return this.units[j + 1] === '>' && j === this.i;
    if (u !== '<' && u !== '>') return false;
    return this.units[j + 1] !== '(';
  }

  private redirect(): Redirect {
    // The file descriptor, or {name} (a descriptor bash picks).
    let fd = '';
    if (this.peek() === '{') while (this.peek() !== '}') fd += this.units[this.i++] as string;
    if (this.peek() === '}') fd += this.units[this.i++] as string;
    while (typeof this.peek() === 'string' && /\d/.test(this.peek() as string))
      fd += this.units[this.i++] as string;
    const op = REDIRECT_OPS.find((o) => this.textAhead(o)) ?? '>';
    this.i += op.length;
    this.blanks();
    const at = fd === '' ? {} : { fd };
    if (op === '<<' || op === '<<-')
      return { op, ...at, heredoc: this.heredocOperator(op === '<<-') };
    return { op, ...at, target: this.word() };
  }

  /** The delimiter of a here-document; its body is read at the next newline. */
  private heredocOperator(strip: boolean): HereDoc {
    let delimiter = '';
    let quoted = false;
    const delimiterHoles: number[] = [];
    let quote: string | undefined;
    for (let u = this.peek(); u !== undefined; u = this.peek()) {
      if (typeof u !== 'string') {
        delimiterHoles.push(u.hole);
        this.site(u.hole, 'none');
        delimiter += '\0';
        quoted = true;
      } else if (quote !== undefined) {
        if (u === quote) quote = undefined;
        else delimiter += u;
      } else if (u === "'" || u === '"') {
        quote = u;
        quoted = true;
      } else if (u === '\\') {
        quoted = true;
      } else if (META.has(u)) break;
      else delimiter += u;
      this.i++;
    }
    const heredoc: HereDoc = { quoted, strip, delimiter, delimiterHoles, body: { parts: [] } };
    this.pending.push({ heredoc });
    return heredoc;
  }

  /** A newline: the bodies of the here-documents announced on the line it ends follow it. */
  private newline(): void {
    this.i++;
    const pending = this.pending;
    this.pending = [];
    for (const { heredoc } of pending) this.heredocBody(heredoc);
  }

  private heredocBody(doc: HereDoc): void {
    const parts: WordPart[] = [];
    const quoting: ShellQuoting = doc.quoted ? 'heredoc-quoted' : 'heredoc';
    for (;;) {
      if (this.atEnd()) break;
      // At the start of each line: is it the delimiter line?
      let j = this.i;
      let line = '';
      for (let u = this.units[j]; u !== undefined && u !== '\n'; u = this.units[++j])
        line += typeof u === 'string' ? u : '\0';
      const bare = doc.strip ? line.replace(/^\t+/, '') : line;
      if (bare === doc.delimiter && doc.delimiterHoles.length === 0) {
        this.i = j < this.units.length ? j + 1 : j;
        break;
      }
      // The line's content, up to and including its newline.
      while (!this.atEnd()) {
        const u = this.peek()!;
        if (u === '\n') {
          this.text(parts, '\n', doc.quoted);
          this.i++;
          break;
        }
        if (typeof u !== 'string') {
          this.i++;
          this.holePart(parts, u.hole, quoting, doc.quoted ? { delimiter: doc.delimiter } : {});
        } else if (doc.quoted) {
          this.text(parts, u, true);
          this.i++;
        } else this.expandingText(parts, u, '$`\\');
      }
    }
    doc.body = { parts };
  }

  // ---- words --------------------------------------------------------------------------------

  /** One word, up to an unquoted character of `stop` (by default the metacharacters). */
  private word(stop: ReadonlySet<string> = META): Word {
    const parts: WordPart[] = [];
    const start = this.i;
    for (;;) {
      const u = this.peek();
      if (u === undefined) break;
      if (typeof u !== 'string') {
        this.i++;
        const whole = this.i - 1 === start && this.wordEndsAt(this.i, stop);
        this.holePart(parts, u.hole, 'none', { wholeWord: whole });
        continue;
      }
      if ((u === '<' || u === '>') && this.peek(1) === '(') {
        this.i += 2;
        const body = this.list(() => this.peek() === ')');
        if (this.peek() === ')') this.i++;
        parts.push({ kind: 'process', body });
        continue;
      }
      if (u === '(' && this.assignmentSoFar(parts)) {
        this.i++;
        parts.push({ kind: 'array', elements: this.arrayElements() });
        continue;
      }
      if (stop.has(u)) break;
      switch (u) {
        case '\\':
          if (this.peek(1) === '\n') this.i += 2;
          else if (typeof this.peek(1) === 'string') {
            this.text(parts, this.peek(1) as string, true);
            this.i += 2;
          } else this.i++;
          break;
        case "'":
          this.i++;
          this.singleQuoted(parts, 'single');
          break;
        case '"':
          this.i++;
          this.doubleQuoted(parts);
          break;
        case '$':
          this.dollar(parts, false);
          break;
        case '`':
          this.backquote(parts, false);
          break;
        default:
          this.text(parts, u, false);
          this.i++;
      }
    }
    return { parts };
  }

  /** Whether the word ends at unit `j` (a hole there is a word of its own). */
  private wordEndsAt(j: number, stop: ReadonlySet<string>): boolean {
    const u = this.units[j];
    return u === undefined || (typeof u === 'string' && stop.has(u));
  }

  /** Whether `parts` so far read `NAME=`, `NAME+=` or `NAME[…]=`: an array may follow. */
  private assignmentSoFar(parts: WordPart[]): boolean {
    if (!parts.every((p) => p.kind === 'text' && !p.quoted)) return false;
    const text = parts.map((p) => (p as { text: string }).text).join('');
    return /^[A-Za-z_]\w*(\[[^\]]*\])?\+?=$/.test(text);
  }

  /** The elements of `NAME=(…)`, up to `)`. */
  private arrayElements(): Word[] {
    const elements: Word[] = [];
    for (let guard = 0; guard < 100_000; guard++) {
      while (this.peek() === ' ' || this.peek() === '\t' || this.peek() === '\n') this.i++;
      if (this.peek() === '#') this.comment();
      if (this.atEnd()) break;
      if (this.peek() === ')') {
        this.i++;
        break;
      }
      const before = this.i;
      elements.push(this.word());
      if (this.i === before) this.i++;
    }
    return elements;
  }

  private singleQuoted(parts: WordPart[], quoting: 'single' | 'ansi'): void {
    for (let u = this.peek(); u !== undefined; u = this.peek()) {
      this.i++;
      if (typeof u !== 'string') this.holePart(parts, u.hole, quoting);
      else if (u === "'") return;
      else if (u === '\\' && quoting === 'ansi' && typeof this.peek() === 'string') {
        this.text(parts, `\\${this.peek() as string}`, true);
        this.i++;
      } else this.text(parts, u, true);
    }
  }

  /** Inside `"…"` (after the opening quote), up to the closing one. */
  private doubleQuoted(parts: WordPart[]): void {
    for (let u = this.peek(); u !== undefined; u = this.peek()) {
      if (typeof u !== 'string') {
        this.i++;
        this.holePart(parts, u.hole, 'double');
      } else if (u === '"') {
        this.i++;
        return;
      } else this.expandingText(parts, u, '$`"\\');
    }
  }

  /**
   * One character of text where expansions happen but words do not end (double quotes, the body
   * of a here-document): `$` and backquotes expand, a backslash escapes the characters of
   * `escapable` (and joins lines), else it stays.
   */
  private expandingText(parts: WordPart[], u: string, escapable: string): void {
    if (u === '\\') {
      const next = this.peek(1);
      if (next === '\n') this.i += 2;
      else if (typeof next === 'string' && escapable.includes(next)) {
        this.text(parts, next, true);
        this.i += 2;
      } else {
        this.text(parts, '\\', true);
        this.i++;
      }
    } else if (u === '$') this.dollar(parts, true);
    else if (u === '`') this.backquote(parts, true);
    else {
      this.text(parts, u, true);
      this.i++;
    }
  }

  /** What follows a `$`: `$'…'`, `$"…"`, `$((…))`, `$(…)`, `${…}`, `$[…]`, `$name`, `$1`, `$@`…. */
  private dollar(parts: WordPart[], quoted: boolean): void {
    // Expansions nest (`${a:-${b:-…}}`): they count against the same depth as lists.
    if (this.depth >= MAX_NESTING || this.tooDeep) {
      this.tooDeep = true;
      this.i = this.units.length;
      return;
    }
    this.depth++;
    try {
      this.expansion(parts, quoted);
    } finally {
      this.depth--;
    }
  }

  private expansion(parts: WordPart[], quoted: boolean): void {
    const next = this.peek(1);
    if (!quoted && next === "'") {
      this.i += 2;
      this.singleQuoted(parts, 'ansi');
    } else if (!quoted && next === '"') {
      this.i += 2;
      this.doubleQuoted(parts);
    } else if (next === '(' && this.peek(2) === '(') {
      this.i += 3;
      parts.push({ kind: 'arith', expr: this.arith('))') });
    } else if (next === '(') {
      this.i += 2;
      const body = this.list(() => this.peek() === ')');
      if (this.peek() === ')') this.i++;
      parts.push({ kind: 'command', body, quoted });
    } else if (next === '{') {
      this.i += 2;
      parts.push({ kind: 'param', param: this.braced(quoted), quoted });
    } else if (next === '[') {
      this.i += 2;
      parts.push({ kind: 'arith', expr: this.arith(']') });
    } else if (typeof next === 'string' && NAME_START.test(next)) {
      this.i++;
      parts.push({ kind: 'param', param: this.simpleParam(this.name()), quoted });
    } else if (typeof next === 'string' && /[0-9@*#?$!-]/.test(next)) {
      this.i += 2;
      parts.push({ kind: 'param', param: this.simpleParam(next), quoted });
    } else {
      this.text(parts, '$', quoted);
      this.i++;
    }
  }

  private simpleParam(name: string): ParamExpansion {
    return { name, indirect: false, length: false };
  }

  /** A name at the cursor (letters, digits, `_`). */
  private name(): string {
    let name = '';
    for (let u = this.peek(); typeof u === 'string' && NAME_CHAR.test(u); u = this.peek()) {
      name += u;
      this.i++;
    }
    return name;
  }

  /** The inside of `${…}` (after `${`), up to its closing brace. */
  private braced(quoted: boolean): ParamExpansion {
    const param: ParamExpansion = { name: '', indirect: false, length: false };
    if (this.peek() === '#' && this.peek(1) !== '}' && !this.opAhead(1)) {
      param.length = true;
      this.i++;
    } else if (this.peek() === '!' && this.peek(1) !== '}') {
      param.indirect = true;
      this.i++;
    }
    const u = this.peek();
    if (u !== undefined && typeof u !== 'string') {
      param.nameHole = u.hole;
      this.site(u.hole, quoted ? 'double' : 'none');
      this.i++;
    } else if (typeof u === 'string' && NAME_START.test(u)) param.name = this.name();
    else if (typeof u === 'string' && /\d/.test(u)) {
      while (typeof this.peek() === 'string' && /\d/.test(this.peek() as string))
        param.name += this.units[this.i++] as string;
    } else if (typeof u === 'string' && /[@*#?$!-]/.test(u)) {
      param.name = u;
      this.i++;
    }
    if (this.peek() === '[') {
      this.i++;
      param.subscript = this.arith(']');
    }
    if (this.peek() === '}') {
      this.i++;
      return param;
    }
    const op = PARAM_OPS.find((o) => this.textAhead(o));
    if (op !== undefined) {
      this.i += op.length;
      param.op = op;
      param.operand = op === ':' ? this.arith('}') : this.paramWord(quoted);
    } else param.operand = this.paramWord(quoted); // not bash's: read to the brace
    return param;
  }

  private opAhead(k: number): boolean {
    const u = this.peek(k);
    return u === ':' || u === '-' || u === '=' || u === '?' || u === '+';
  }

  /** The word after an operator of `${…}`, up to the closing brace (which it consumes). */
  private paramWord(quoted: boolean): Word {
    const parts: WordPart[] = [];
    let depth = 0;
    for (let u = this.peek(); u !== undefined; u = this.peek()) {
      if (typeof u !== 'string') {
        this.i++;
        this.holePart(parts, u.hole, quoted ? 'double' : 'none');
      } else if (u === '}' && depth === 0) {
        this.i++;
        break;
      } else if (u === '{') {
        depth++;
        this.text(parts, u, quoted);
        this.i++;
      } else if (u === '}') {
        depth--;
        this.text(parts, u, quoted);
        this.i++;
      } else if (u === '\\') {
        if (typeof this.peek(1) === 'string') this.text(parts, this.peek(1) as string, true);
        this.i += 2;
      } else if (u === '$') this.dollar(parts, quoted);
      else if (u === '`') this.backquote(parts, quoted);
      else if (u === '"') {
        this.i++;
        this.doubleQuoted(parts);
      } else if (u === "'" && !quoted) {
        this.i++;
        this.singleQuoted(parts, 'single');
      } else {
        this.text(parts, u, quoted);
        this.i++;
      }
    }
    return { parts };
  }

  /**
   * Arithmetic text up to `close` (`))`, `]` or `}`), which it consumes: identifiers become
   * `name` parts (bash reads their values as arithmetic), holes are arithmetic.
   */
  private arith(close: '))' | ']' | '}'): Word {
    const parts: WordPart[] = [];
    let depth = 0;
    for (let u = this.peek(); u !== undefined; u = this.peek()) {
      if (typeof u !== 'string') {
        this.i++;
        this.holePart(parts, u.hole, 'none', { arithmetic: true });
        continue;
      }
      if (close === '))' && u === ')' && depth === 0 && this.peek(1) === ')') {
        this.i += 2;
        break;
      }
      if (close === ']' && u === ']' && depth === 0) {
        this.i++;
        break;
      }
      if (close === '}' && u === '}' && depth === 0) {
        this.i++;
        break;
      }
      if (u === '(' || u === '[' || u === '{') depth++;
      else if ((u === ')' || u === ']' || u === '}') && depth > 0) depth--;
      if (u === '$') {
        this.dollar(parts, true);
        continue;
      }
      if (u === '`') {
        this.backquote(parts, true);
        continue;
      }
      if (/\d/.test(u)) {
        // A number, in any base (`0x1F`, `16#ff`): never a name.
        let number = '';
        for (let v = this.peek(); typeof v === 'string' && /[\w#@]/.test(v); v = this.peek()) {
          number += v;
          this.i++;
        }
        this.text(parts, number, false);
        continue;
      }
      if (NAME_START.test(u)) {
        parts.push({ kind: 'name', name: this.name() });
        continue;
      }
      this.text(parts, u, false);
      this.i++;
    }
    return { parts };
  }

  /** A backquoted command: its text, unescaped, read as a list of its own. */
  private backquote(parts: WordPart[], quoted: boolean): void {
    this.i++;
    const inner: ShellUnit[] = [];
    for (let u = this.peek(); u !== undefined && u !== '`'; u = this.peek()) {
      this.i++;
      if (u === '\\' && (this.peek() === '`' || this.peek() === '$' || this.peek() === '\\')) {
        inner.push(this.peek() as string);
        this.i++;
      } else inner.push(u);
    }
    if (this.peek() === '`') this.i++;
    const reader = new ShellReader(inner, this.depth);
    const body = reader.list(() => false);
    reader.holes.forEach((site, hole) => {
      if (site !== undefined) this.holes[hole] = site;
    });
    if (reader.tooDeep) this.tooDeep = true;
    parts.push({ kind: 'command', body, quoted });
  }

  // ---- small moves ------------------------------------------------------------------------

  private holePart(
    parts: WordPart[],
    hole: number,
    quoting: ShellQuoting,
    extra: Partial<HoleSite> = {},
  ): void {
    this.site(hole, quoting, extra);
    parts.push({ kind: 'hole', hole, quoting });
  }

  private site(hole: number, quoting: ShellQuoting, extra: Partial<HoleSite> = {}): void {
    this.holes[hole] = { quoting, arithmetic: false, wholeWord: false, ...extra };
  }

  private text(parts: WordPart[], text: string, quoted: boolean): void {
    const last = parts[parts.length - 1];
    if (last?.kind === 'text' && last.quoted === quoted) last.text += text;
    else parts.push({ kind: 'text', text, quoted });
  }

  private comment(): void {
    for (let u = this.peek(); u !== undefined && u !== '\n'; u = this.peek()) {
      if (typeof u !== 'string') this.site(u.hole, 'comment');
      this.i++;
    }
  }

  /** A literal word at the cursor (a name, `in`), consumed; '' when the cursor holds none. */
  private literalWord(): string {
    let word = '';
    for (let u = this.peek(); typeof u === 'string' && !META.has(u); u = this.peek()) {
      if (u === '"' || u === "'" || u === '\\' || u === '$' || u === '`') break;
      word += u;
      this.i++;
    }
    return word;
  }

  /**
   * The reserved word at the cursor (`if`, `then`, `{`, `}`, `[[`, `!`, `time`, …), followed by
   * a blank, an operator or the end; undefined otherwise.
   */
  private reservedAhead(): string | undefined {
    let j = this.i;
    let word = '';
    for (let u = this.units[j]; typeof u === 'string' && !META.has(u); u = this.units[++j]) {
      word += u;
      if (word.length > 8) return undefined;
    }
    if (!RESERVED.has(word)) return undefined;
    const after = this.units[j];
    if (after !== undefined && typeof after !== 'string') return undefined;
    return word;
  }

  private textAhead(text: string): boolean {
    for (let k = 0; k < text.length; k++) if (this.units[this.i + k] !== text[k]) return false;
    return true;
  }

  private blanks(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.i++;
    if (this.peek() === '\\' && this.peek(1) === '\n') {
      this.i += 2;
      this.blanks();
    }
  }

  private blanksAndNewlines(): void {
    for (;;) {
      this.blanks();
      if (this.peek() === '\n') this.newline();
      else if (this.peek() === ';' && this.peek(1) !== ';') this.i++;
      else return;
    }
  }

  private peek(k = 0): ShellUnit | undefined {
    return this.units[this.i + k];
  }

  private atEnd(): boolean {
    return this.i >= this.units.length;
  }
}

const RESERVED = new Set([
  '!',
  '{',
  '}',
  '[[',
  'if',
  'then',
  'elif',
  'else',
  'fi',
  'while',
  'until',
  'do',
  'done',
  'for',
  'select',
  'in',
  'case',
  'esac',
  'function',
  'time',
]);
