/**
 * Finds every place where a shell script would read a template's value as more than data, and
 * the shape the value must have there (`value-shape.ts`). A value reaches bash as a variable's
 * expansion, which bash never parses; it can only become code where bash, or a program the
 * script starts, reads text again:
 *
 * - **arithmetic** (`(( ))`, `$(( ))`, `$[ ]`, `for (( ))`, `let`, `declare -i`, array indexes,
 *   `${x:offset}`, the operands of `[[ -eq ]]`, `>&` targets), where an array index inside a value
 *   runs command substitutions: only integers;
 * - **variable names** (`read`, `printf -v`, `declare`, `unset`, `[[ -v ]]`, `${!x}`, `declare
 *   -n`), where a name's index is arithmetic: only names;
 * - **shell code read again** (`eval` under any prefix, `trap`, `sh -c`, a shell reading a
 *   here-string, a here-document, a pipe, process substitution or a script file, `ssh`, `watch`,
 *   `su -c`, `sudo -s`, `${x@P}`, `PS4`): the text is read again as shell (and analysed again, so
 *   the position a value takes in it counts too): only plain words, and nothing where the text
 *   read cannot be seen (a pipe from another command);
 * - **other languages' program text** (`python -c`, `node -e`, `perl -e`, `awk '…'`, `sed`,
 *   `jq`, `psql -c`, `sqlite3`, …): one plain token at most;
 * - **options**: a word that begins with a value, before `--`, must not begin with `-`;
 * - **the program itself**, and variables that choose programs (`PATH`, `LD_PRELOAD`, …): never.
 *
 * Values travel through variables, `read`, `for`, command substitutions, pipes and function
 * arguments (`value-flow.ts`), so a need found at a variable's use reaches the value assigned to
 * it. Pure: no I/O.
 */
import {
  HINTS,
  NO_STDIN,
  optionHint,
  type AnalysisScope,
  type Expanded,
  type Stdin,
  type Visible,
} from './analysis-scope.js';
import { ProgramNeeds } from './program-needs.js';
import { MAX_NESTING, readShell } from './read-shell.js';
import { ARITH_TESTS, CODE_VARIABLES, PROGRAM_VARIABLES } from './shell-programs.js';
import type { ShellSlot } from './shell-slot.js';
import type {
  Command,
  CommandList,
  CompoundCommand,
  HoleSite,
  ParamExpansion,
  Redirect,
  ShellUnit,
  SimpleCommand,
  Word,
  WordPart,
} from './shell-tree.js';
import { forEachCommand, literalOf, programName, splitAssignment } from './shell-words.js';
import {
  ANY_FILE,
  ANY_STREAM,
  CLEAN,
  fileKey,
  fileTaint,
  slotSource,
  streamKey,
  streamTaint,
  union,
  ValueFlow,
  type Taint,
} from './value-flow.js';
import type { ValueShape } from './value-shape.js';

/**
 * Analyses the shell template made of `texts` (one more text than slots): the site and the needs
 * of each slot, in order.
 */
export function analyseShell(texts: readonly string[]): ShellSlot[] {
  const units: ShellUnit[] = [];
  texts.forEach((text, index) => {
    for (const ch of text) units.push(ch);
    if (index < texts.length - 1) units.push({ hole: index });
  });
  const count = texts.length - 1;
  const { list, holes, tooDeep } = readShell(units);
  const flow = new ValueFlow();
  const taints = Array.from({ length: count }, (_, i): Taint => new Set([slotSource(i)]));
  const declared = new Declarations();
  declared.collect(list);
  new ShellAnalyzer(flow, declared, taints, holes, 0).list(list, NO_STDIN);
  if (tooDeep) {
    // Text past the depth it was read to can hold anything: no value may stand in it.
    for (const taint of taints)
      flow.need(taint, {
        shape: 'nothing',
        construct: `shell text nested deeper than ${MAX_NESTING} levels, which is not read`,
        hint: 'Write the command with less nesting (a function, or a script file in the project).',
      });
  }
  const needs = flow.slotNeeds(count);
  return needs.map((n, i) => ({
    ...(holes[i] ?? { quoting: 'none', arithmetic: false, wholeWord: false }),
    needs: n,
  }));
}

/** How deep text read again is followed; deeper, a value in it is refused. */
const MAX_DEPTH = 4;

/** Names the script declares: functions, integer variables, associative arrays. */
class Declarations {
  readonly functions = new Set<string>();
  readonly integers = new Set<string>();
  readonly assoc = new Set<string>();
  /**
   * Variables assigned only literal texts, with those texts (`cmd=eval` → {eval}); a variable
   * also assigned anything else maps to undefined.
   */
  readonly constants = new Map<string, Set<string> | undefined>();

  collect(list: CommandList): void {
    forEachCommand(list, (c) => {
      if (c.kind === 'compound') {
        if (c.keyword === 'function' && c.name) this.functions.add(c.name);
        if ((c.keyword === 'for' || c.keyword === 'select') && c.name)
          for (const w of c.words) this.constant(c.name, literalOf(w));
        return;
      }
      for (const w of c.words) {
        const split = splitAssignment(w);
        if (split === undefined) break;
        this.constant(
          split.name,
          split.index === undefined ? literalOf({ parts: split.value }) : undefined,
        );
      }
      const words = c.words.map(literalOf);
      const at = words.findIndex((w) => w === undefined || !ASSIGNMENT.test(w));
      const program = at === -1 ? undefined : words[at];
      if (program === undefined || !DECLARERS.has(program)) return;
      const flags = new Set<string>();
      for (const w of words.slice(at + 1)) {
        if (w === undefined) continue;
        if (/^-[a-zA-Z]+$/.test(w)) for (const f of w.slice(1)) flags.add(f);
        const name = /^[A-Za-z_]\w*/.exec(w)?.[0];
        if (name === undefined) continue;
        if (flags.has('i')) this.integers.add(name);
        if (flags.has('A')) this.assoc.add(name);
        const eq = w.indexOf('=');
        if (eq !== -1) this.constant(name, w.slice(eq + 1));
      }
    });
  }

  /** `name` is assigned `value` (undefined: something not literal). */
  private constant(name: string, value: string | undefined): void {
    if (!this.constants.has(name)) this.constants.set(name, new Set());
    const values = this.constants.get(name);
    if (value === undefined) this.constants.set(name, undefined);
    else values?.add(value);
  }
}

const DECLARERS = new Set(['declare', 'typeset', 'local', 'export', 'readonly']);
const ASSIGNMENT = /^[A-Za-z_]\w*(\[[^\]]*\])?\+?=/;

class ShellAnalyzer implements AnalysisScope {
  private readonly programs = new ProgramNeeds(this);

  constructor(
    private readonly values: ValueFlow,
    private readonly declared: Declarations,
    /** What each hole of the text carries. */
    private readonly holeTaints: readonly Taint[],
    private readonly holes: readonly HoleSite[],
    /** 0 for the template itself; more for text read again. */
    private readonly depth: number,
  ) {}

  need(taint: Taint, shape: ValueShape, construct: string, hint: string): void {
    if (taint.size > 0) this.values.need(taint, { shape, construct, hint });
  }

  flow(taint: Taint, name: string): void {
    this.values.flow(taint, name);
  }

  /** In text read again, holes stand unquoted where blanks would split them into code. */
  private get reparsed(): boolean {
    return this.depth > 0;
  }

  // ---- lists and commands ---------------------------------------------------------------

  /** Analyses `list`; returns what its output may carry. */
  list(list: CommandList, stdin: Stdin): Taint {
    const outputs: Taint[] = [];
    for (const p of list.pipelines) {
      let input = stdin;
      for (const command of p.commands) {
        const out = this.command(command, input);
        outputs.push(out);
        input = { taint: out, visible: [], opaque: true };
      }
    }
    return union(...outputs);
  }

  private command(c: Command, stdin: Stdin): Taint {
    // `exec` with redirections and no command redirects the rest of the script.
    const exec = c.kind === 'simple' && c.words.length === 1 && literalOf(c.words[0]!) === 'exec';
    const own = this.inputs(c.redirects, exec);
    const out = c.kind === 'simple' ? this.simple(c, own ?? stdin) : this.compound(c, own ?? stdin);
    this.outputs(c.redirects, out);
    return out;
  }

  /**
   * Expands redirection targets (a `>&` target is arithmetic) and returns the standard input
   * they give the command, or undefined when they give none. What goes to other descriptors
   * flows into streams (`>fd:N`) that later commands may read: `exec 3<<<…; bash <&3`.
   */
  private inputs(redirects: readonly Redirect[], exec: boolean): Stdin | undefined {
    let stdin: Stdin | undefined;
    const give = (fd: string | undefined, given: Stdin) => {
      if (fd === undefined || fd === '0') {
        stdin = given;
        if (exec) this.writeStream('0', given.taint);
      } else this.writeStream(fd, given.taint);
    };
    for (const r of redirects) {
      if (r.heredoc !== undefined) {
        const doc = r.heredoc;
        const delimiter: Taint = union(...doc.delimiterHoles.map((h) => this.holeTaint(h)));
        this.need(delimiter, 'nothing', 'the delimiter of a here-document', HINTS.program);
        const body = this.expand(doc.body);
        give(r.fd, { taint: body.taint, visible: [this.visibleOf([body])], opaque: false });
        continue;
      }
      const target = r.target === undefined ? undefined : this.expand(r.target);
      if (target === undefined) continue;
      if (r.op === '>&' || r.op === '<&') {
        // `>&word` takes a number; bash reads any other word again (it was a file name).
        this.arithUse(target, `the target of ${r.op}, a file descriptor`);
      }
      if (this.reparsed) this.oneWord(target, 'the target of a redirection');
      if (r.op === '<<<') {
        give(r.fd, { taint: target.taint, visible: [this.visibleOf([target])], opaque: false });
      } else if (r.op === '<' || r.op === '<>') {
        give(r.fd, {
          taint: union(target.processes, fileTaint(target.literal)),
          visible: [],
          opaque: true,
        });
      } else if (r.op === '<&') {
        give(r.fd, { taint: streamTaint(target.literal), visible: [], opaque: true });
      }
    }
    return stdin;
  }

  /** Output redirections: what the command writes flows into the files and streams it names. */
  private outputs(redirects: readonly Redirect[], out: Taint): void {
    for (const r of redirects) {
      if (r.target === undefined || !['>', '>>', '>|', '&>', '&>>', '>&', '<>'].includes(r.op))
        continue;
      const target = literalOf(r.target);
      if (r.op === '>&' && target !== undefined && /^\d+$/.test(target))
        this.writeStream(target, out);
      else this.writeFile(target, out);
      // `exec 3>file`: what goes to descriptor 3 later lands in the file.
      if (r.fd !== undefined && r.op !== '>&') this.writeFile(target, new Set([streamKey(r.fd)]));
    }
  }

  /** Whatever `taint` carries is written to file descriptor `fd` (`3`, or `{name}`). */
  private writeStream(fd: string, taint: Taint): void {
    this.flow(taint, streamKey(fd));
    this.flow(taint, ANY_STREAM);
  }

  /** Whatever `taint` carries is written into the file at `path` (undefined: a path not known). */
  writeFile(path: string | undefined, taint: Taint): void {
    this.flow(taint, fileKey(path));
    this.flow(taint, ANY_FILE);
  }

  private compound(c: CompoundCommand, stdin: Stdin): Taint {
    const outputs: Taint[] = [];
    switch (c.keyword) {
      case '((':
      case 'for ((':
      case 'select ((':
        for (const a of c.arith) this.arithUse(this.expand(a), `arithmetic (\`(( ))\`)`);
        break;
      case '[[':
        this.condition(c.words.map((w) => this.expand(w)));
        break;
      case 'for':
      case 'select': {
        const words = c.words.map((w) => this.expand(w));
        if (c.name) this.flow(union(...words.map((w) => w.taint)), c.name);
        break;
      }
      case 'case': {
        // The patterns are expanded too (what stands inside them has needs of its own).
        const [subject] = c.words.map((w) => this.expand(w));
        if (subject !== undefined) {
          outputs.push(subject.taint);
          if (this.reparsed) this.oneWord(subject, 'the word `case` matches');
        }
        break;
      }
      case 'function': {
        // Its input and output are those of each call: variables the calls flow through.
        const input: Stdin = { taint: new Set([`>stdin:${c.name}`]), visible: [], opaque: true };
        for (const l of c.lists) this.flow(this.list(l, input), `>out:${c.name}`);
        return CLEAN;
      }
    }
    for (const l of c.lists) outputs.push(this.list(l, stdin));
    return union(...outputs);
  }

  /** The words of `[[ … ]]`: operands of `-eq` and the like are arithmetic, of `-v` names. */
  private condition(words: Expanded[]): void {
    words.forEach((w, i) => {
      const op = w.literal;
      if (op !== undefined && ARITH_TESTS.has(op)) {
        for (const operand of [words[i - 1], words[i + 1]])
          if (operand !== undefined) this.arithUse(operand, `an operand of \`[[ ${op} ]]\``);
      }
      if (op === '-v' && words[i + 1] !== undefined)
        this.nameUse(words[i + 1]!, '`[[ -v ]]`, which takes a variable name');
    });
  }

  private simple(c: SimpleCommand, stdin: Stdin): Taint {
    const words = c.words.map((w) => this.expand(w));
    let k = 0;
    while (
      k < words.length &&
      words[k]!.word.parts[0]?.kind === 'text' &&
      this.assignment(words[k]!, {})
    )
      k++;
    // `$(< file)` prints the file: a command of redirections alone passes its input on.
    if (words.length === 0) return c.redirects.some((r) => r.op === '<') ? stdin.taint : CLEAN;
    if (k === words.length) return CLEAN;
    return this.run(words.slice(k), stdin);
  }

  /**
   * A command's words once its leading assignments are read: the program and its arguments.
   * Returns what its output may carry.
   */
  run(words: readonly Expanded[], stdin: Stdin): Taint {
    const [program, ...args] = words;
    if (program === undefined) return CLEAN;
    // What it prints may hold its arguments, its input and the files its arguments name.
    const files = args.flatMap((a) =>
      a.literal === undefined || a.literal.startsWith('-') ? [] : [fileTaint(a.literal)],
    );
    const output = union(stdin.taint, ...args.map((a) => a.taint), ...files);
    this.need(
      union(program.taint, program.processes),
      'nothing',
      'the name of the program a command runs',
      HINTS.program,
    );
    if (program.literal?.includes('/') === true)
      this.need(
        fileTaint(program.literal),
        'nothing',
        'a program file the script writes values into, then runs',
        HINTS.stdin,
      );
    const names = this.programNames(program);
    if (names === undefined) {
      // A program the text does not name (`$RUNNER …`): its arguments stay plain words.
      this.options('a command', args, 'getopt');
      for (const a of args)
        this.need(
          a.taint,
          'shell-words',
          'an argument of a program the command does not name',
          HINTS.program,
        );
      return output;
    }
    const printed: Taint[] = [];
    for (const name of names) {
      if (this.declared.functions.has(name)) {
        // A function's arguments are its $1, $2, …, its input and output the call's: checked
        // where the function uses them.
        this.flow(union(...args.map((a) => a.taint)), '@');
        this.flow(union(stdin.taint, ...stdin.visible.flatMap((v) => v.taints)), `>stdin:${name}`);
        printed.push(new Set([`>out:${name}`]));
        continue;
      }
      printed.push(this.programs.apply(name, args, stdin));
    }
    return union(output, ...printed);
  }

  /**
   * The programs a command word names: its text, or the literal texts a variable standing alone
   * there is ever assigned (`cmd=eval; $cmd …`); undefined when the text does not tell.
   */
  private programNames(program: Expanded): string[] | undefined {
    const name = programName(program.literal);
    if (name !== undefined) return [name];
    const [part, ...more] = program.word.parts;
    if (part?.kind !== 'param' || more.length > 0 || part.param.op !== undefined) return undefined;
    const values = this.declared.constants.get(part.param.name);
    if (values === undefined || values.size === 0) return undefined;
    const names = [...values].map(programName);
    return names.every((n) => n !== undefined) ? (names as string[]) : undefined;
  }

  // ---- the rules ------------------------------------------------------------------------

  /**
   * The option rule: a word that begins with a value, in option position (before `--`; for
   * builtins and most interpreters before the first operand), must not begin with `-`.
   */
  options(
    program: string,
    args: readonly Expanded[],
    style: 'getopt' | 'builtin' | 'none',
    argumentsOf: (option: string) => number = () => 0,
  ): void {
    if (style === 'none') return;
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a.literal === '--') return;
      if (a.literal?.startsWith('-') === true) {
        // An option that takes arguments: they are its own, not options.
        if (!a.literal.startsWith('--') || !a.literal.includes('=')) i += argumentsOf(a.literal);
        continue;
      }
      if (a.lead.size > 0) {
        this.need(
          a.lead,
          a.leadSplit ? 'no-options' : 'not-option',
          `an argument of \`${program}\` where an option may stand`,
          optionHint(program),
        );
        if (style === 'builtin') return;
      } else if (style === 'builtin' && !(a.literal ?? '').startsWith('-')) return;
    }
  }

  /** `word` is read as arithmetic: the values it carries must be integers. */
  arithUse(word: Expanded, construct: string): void {
    this.need(word.taint, 'integer', construct, HINTS.integer);
    // Names in its literal text are variables whose values bash reads as arithmetic too.
    for (const part of word.word.parts) {
      if (part.kind !== 'text') continue;
      for (const name of part.text.match(/(?<![\w#$])[A-Za-z_]\w*/g) ?? [])
        this.need(new Set([name]), 'integer', construct, HINTS.integer);
    }
  }

  /** `word` names a variable: the values it carries must be names. */
  nameUse(word: Expanded, construct: string): void {
    const [first] = word.word.parts;
    if (first?.kind === 'text' && /^[A-Za-z_]\w*\[/.test(first.text)) {
      // NAME[index]: the index is arithmetic.
      this.arithUse(word, `the index of an array element ${construct}`);
      return;
    }
    this.need(word.taint, 'name', construct, HINTS.name);
  }

  /** In text read again: a value there must be one word (blanks would split it into code). */
  private oneWord(word: Expanded, construct: string): void {
    word.word.parts.forEach((part, i) => {
      if (part.kind === 'hole' && part.quoting === 'none')
        this.need(word.parts[i]!, 'one-word', construct, HINTS.shell);
      if ((part.kind === 'param' || part.kind === 'command') && !part.quoted)
        this.need(word.parts[i]!, 'one-word', construct, HINTS.shell);
    });
  }

  /**
   * `NAME=value`, `NAME+=value`, `NAME[index]=value`, `NAME=(…)`: the value flows into NAME, and
   * some names ask more of it. Returns false when `a` is no assignment.
   */
  assignment(
    a: Expanded,
    how: { integer?: boolean; nameref?: boolean; assoc?: boolean; construct?: string },
  ): boolean {
    const split = splitAssignment(a.word);
    if (split === undefined) return false;
    const { name, index, value } = split;
    const valueTaint = union(...value.map((p) => this.partTaint(a, p)));
    this.flow(valueTaint, name);
    const construct = how.construct ?? 'an assignment';
    if (index !== undefined && !how.assoc && !this.declared.assoc.has(name)) {
      const sub: Expanded = {
        ...a,
        word: { parts: index },
        taint: union(...index.map((p) => this.partTaint(a, p))),
      };
      this.arithUse(sub, `the index of ${name}[…]`);
    }
    const valueExpanded: Expanded = { ...a, word: { parts: value }, taint: valueTaint };
    if (how.integer || this.declared.integers.has(name))
      this.arithUse(valueExpanded, `${construct}, whose variable ${name} holds an integer`);
    if (how.nameref)
      this.need(
        valueTaint,
        'name',
        `${construct} -n, which makes ${name} name another variable`,
        HINTS.name,
      );
    if (CODE_VARIABLES.has(name))
      this.need(valueTaint, 'shell-words', `${name}, which bash expands as a prompt`, HINTS.shell);
    if (PROGRAM_VARIABLES.has(name))
      this.need(
        valueTaint,
        'nothing',
        `${name}, which chooses the programs that run`,
        HINTS.program,
      );
    for (const part of value) {
      if (part.kind !== 'array') continue;
      for (const element of part.elements) {
        // `[index]=value` elements: the index is arithmetic, as in NAME[index]=value.
        const e = this.expand(element);
        const first = element.parts[0];
        const keyed = first?.kind === 'text' && !first.quoted && first.text.startsWith('[');
        if (keyed && !how.assoc && !this.declared.assoc.has(name))
          this.arithUse(e, `the index of ${name}[…]`);
        this.flow(e.taint, name);
      }
    }
    if (this.reparsed) this.oneWord(valueExpanded, 'the value of an assignment');
    return true;
  }

  // ---- text read again ------------------------------------------------------------------

  /** `words`, joined by spaces, are read again as shell code (`eval`, `sh -c`, `ssh`, …). */
  reparse(words: readonly Expanded[], construct: string): void {
    this.reparseVisible(this.visibleOf(words), construct);
  }

  reparseVisible(text: Visible, construct: string): void {
    const all = union(...text.taints);
    this.need(all, 'shell-words', construct, HINTS.shell);
    if (this.depth + 1 > MAX_DEPTH) {
      this.need(
        all,
        'nothing',
        `${construct}, read again more than ${MAX_DEPTH} times`,
        HINTS.shell,
      );
      return;
    }
    const inner = readShell(text.units);
    if (inner.tooDeep)
      this.need(
        all,
        'nothing',
        `${construct}, nested deeper than ${MAX_NESTING} levels`,
        HINTS.shell,
      );
    this.declared.collect(inner.list);
    new ShellAnalyzer(this.values, this.declared, text.taints, inner.holes, this.depth + 1).list(
      inner.list,
      NO_STDIN,
    );
  }

  /** The text of `words` joined by spaces, its expansions and values as holes. */
  private visibleOf(words: readonly Expanded[]): Visible {
    const units: ShellUnit[] = [];
    const taints: Taint[] = [];
    words.forEach((w, index) => {
      if (index > 0) units.push(' ');
      w.word.parts.forEach((part, i) => {
        if (part.kind === 'text') for (const ch of part.text) units.push(ch);
        else {
          units.push({ hole: taints.length });
          taints.push(w.parts[i] ?? CLEAN);
        }
      });
    });
    return { units, taints };
  }

  // ---- expansions -----------------------------------------------------------------------

  private holeTaint(hole: number): Taint {
    return this.holeTaints[hole] ?? CLEAN;
  }

  /** Expands `word`: what it carries, and the needs of what stands inside its expansions. */
  private expand(word: Word): Expanded {
    const parts = word.parts.map((p) => this.expandPart(p));
    let lead: Taint = CLEAN;
    let leadSplit = false;
    for (let i = 0; i < word.parts.length; i++) {
      const part = word.parts[i]!;
      if (part.kind === 'text') {
        if (part.text === '') continue;
        break;
      }
      // An integer, an array, the name of a pipe: never an option.
      if (part.kind === 'arith' || part.kind === 'array' || part.kind === 'process') break;
      lead = parts[i]!;
      leadSplit =
        (part.kind === 'hole' && part.quoting === 'none' && this.reparsed) ||
        ((part.kind === 'param' || part.kind === 'command') && !part.quoted);
      break;
    }
    const processes = union(
      ...word.parts.map((p, i) => (p.kind === 'process' ? parts[i]! : CLEAN)),
    );
    return {
      word,
      taint: union(...word.parts.map((p, i) => (p.kind === 'process' ? CLEAN : parts[i]!))),
      parts,
      literal: word.parts.every((p) => p.kind === 'text')
        ? word.parts.map((p) => (p as { text: string }).text).join('')
        : undefined,
      lead,
      leadSplit,
      processes,
    };
  }

  /** The taint of a part already expanded in `a`, found by identity. */
  private partTaint(a: Expanded, part: WordPart): Taint {
    const i = a.word.parts.indexOf(part);
    return i === -1 ? this.expandPart(part) : (a.parts[i] ?? CLEAN);
  }

  private expandPart(part: WordPart): Taint {
    switch (part.kind) {
      case 'text':
        return CLEAN;
      case 'hole':
        return this.holeTaint(part.hole);
      case 'name':
        return new Set([part.name]);
      case 'param':
        return this.param(part.param);
      case 'command':
        return this.list(part.body, NO_STDIN);
      case 'process':
        return this.list(part.body, NO_STDIN);
      case 'arith':
        this.arithUse(this.expand(part.expr), 'arithmetic (`$(( ))`)');
        return CLEAN; // an integer
      case 'array':
        return union(...part.elements.map((e) => this.expand(e).taint));
    }
  }

  /** A parameter expansion: what it carries, and the needs of its index, offsets and the rest. */
  private param(p: ParamExpansion): Taint {
    const name = /^\d+$/.test(p.name) && p.name !== '0' ? '@' : p.name === '*' ? '@' : p.name;
    let taint: Taint = '#?$!-'.includes(p.name) && p.name !== '' ? CLEAN : new Set([name]);
    if (p.nameHole !== undefined) {
      const hole = this.holeTaint(p.nameHole);
      this.need(hole, 'name', 'the name of a variable `${…}` expands', HINTS.name);
      taint = union(taint, hole);
    }
    if (p.subscript !== undefined) {
      const sub = this.expand(p.subscript);
      if (!this.declared.assoc.has(name)) this.arithUse(sub, `the index of ${name}[…]`);
    }
    if (p.indirect && p.op === undefined)
      this.need(taint, 'name', '`${!x}`, which reads the variable x names', HINTS.name);
    if (p.length) return CLEAN;
    const operand = p.operand === undefined ? undefined : this.expand(p.operand);
    if (operand === undefined) return taint;
    switch (p.op) {
      case ':':
        this.arithUse(operand, 'a substring offset `${x:…}`');
        return taint;
      case '@':
        if (operand.literal === 'P')
          this.need(
            taint,
            'shell-words',
            '`${x@P}`, which expands the value as a prompt',
            HINTS.shell,
          );
        return taint;
      case ':=':
      case '=':
        this.flow(operand.taint, name);
        return union(taint, operand.taint);
      default:
        return union(taint, operand.taint);
    }
  }
}
