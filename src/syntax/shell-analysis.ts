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
import { readShell } from './read-shell.js';
import {
  ARITH_TESTS,
  BUILTINS,
  CODE_VARIABLES,
  interpreterOf,
  NO_OPTIONS,
  PREFIXES,
  PROGRAM_VARIABLES,
  SHELLS,
  type Interpreter,
  type Prefix,
} from './shell-programs.js';
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
import { CLEAN, slotSource, union, ValueFlow, type Taint } from './value-flow.js';
import type { ShellSlot } from './shell-slot.js';
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
  const { list, holes } = readShell(units);
  const flow = new ValueFlow();
  const taints = Array.from({ length: count }, (_, i): Taint => new Set([slotSource(i)]));
  const declared = new Declarations();
  declared.collect(list);
  new ShellAnalyzer(flow, declared, taints, holes, 0).list(list, NO_STDIN);
  const needs = flow.slotNeeds(count);
  return needs.map((n, i) => ({
    ...(holes[i] ?? { quoting: 'none', arithmetic: false, wholeWord: false }),
    needs: n,
  }));
}

/** How deep text read again is followed; deeper, a value in it is refused. */
const MAX_DEPTH = 4;

/** Shell text that can be seen (a here-document, a here-string, `eval`'s words). */
interface Visible {
  units: ShellUnit[];
  /** What each hole of {@link units} carries. */
  taints: Taint[];
}

/** Where a command's standard input comes from. */
interface Stdin {
  /** What it may carry. */
  taint: Taint;
  /** The texts of here-documents and here-strings. */
  visible: Visible[];
  /** Part of it comes from where its text cannot be seen (a pipe, a file). */
  opaque: boolean;
}

const NO_STDIN: Stdin = { taint: CLEAN, visible: [], opaque: false };

/** A word once expanded: what it carries, and what the checks need to know of it. */
interface Expanded {
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

/** Names the script declares: functions, integer variables, associative arrays. */
class Declarations {
  readonly functions = new Set<string>();
  readonly integers = new Set<string>();
  readonly assoc = new Set<string>();

  collect(list: CommandList): void {
    forEachCommand(list, (c) => {
      if (c.kind === 'compound') {
        if (c.keyword === 'function' && c.name) this.functions.add(c.name);
        return;
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
      }
    });
  }
}

const DECLARERS = new Set(['declare', 'typeset', 'local', 'export', 'readonly']);
const ASSIGNMENT = /^[A-Za-z_]\w*(\[[^\]]*\])?\+?=/;

/** The hints every construct shares; `{value}` stands for the value's template. */
const HINTS = {
  integer:
    'Pass an integer (an input of type="integer" always is one), or compare as text: [ "$x" = 5 ].',
  name: 'Name the variable in the directive and assign the value to it: x={value}.',
  shell: `Pass the value to the script as an argument instead of inside it: sh -c 'echo "$1"' _ {value}.`,
  stdin: `Give the script its values as arguments, not inside the text it reads: bash -s -- {value} <<'EOF' … "$1" … EOF.`,
  program:
    'Name the program in the directive, and choose among a few with a condition (<when expr="inputs.tool = \'gzip\'" to="…"/>).',

  code: 'Pass the value to the program as data (an argument, an environment variable, a file), not inside its program text.',
};

class ShellAnalyzer {
  constructor(
    private readonly flow: ValueFlow,
    private readonly declared: Declarations,
    /** What each hole of the text carries. */
    private readonly holeTaints: readonly Taint[],
    private readonly holes: readonly HoleSite[],
    /** 0 for the template itself; more for text read again. */
    private readonly depth: number,
  ) {}

  private need(taint: Taint, shape: ValueShape, construct: string, hint: string): void {
    if (taint.size > 0) this.flow.need(taint, { shape, construct, hint });
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
    const own = this.redirects(c.redirects);
    const input = own ?? stdin;
    return c.kind === 'simple' ? this.simple(c, input) : this.compound(c, input);
  }

  /**
   * Expands redirection targets (a `>&` target is arithmetic) and returns the standard input
   * they give the command, or undefined when they give none.
   */
  private redirects(redirects: readonly Redirect[]): Stdin | undefined {
    let stdin: Stdin | undefined;
    for (const r of redirects) {
      if (r.heredoc !== undefined) {
        const doc = r.heredoc;
        const delimiter: Taint = union(...doc.delimiterHoles.map((h) => this.holeTaint(h)));
        this.need(delimiter, 'nothing', 'the delimiter of a here-document', HINTS.program);
        const body = this.expand(doc.body);
        stdin = {
          taint: body.taint,
          visible: [this.visibleOf([body])],
          opaque: false,
        };
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
        stdin = { taint: target.taint, visible: [this.visibleOf([target])], opaque: false };
      } else if (r.op === '<' || r.op === '<>' || r.op === '<&') {
        stdin = { taint: target.processes, visible: [], opaque: true };
      }
    }
    return stdin;
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
        if (c.name) this.flow.flow(union(...words.map((w) => w.taint)), c.name);
        break;
      }
      case 'case': {
        const [subject, ...patterns] = c.words.map((w) => this.expand(w));
        if (subject !== undefined) {
          outputs.push(subject.taint);
          if (this.reparsed) this.oneWord(subject, 'the word `case` matches');
        }
        void patterns;
        break;
      }
      case 'function':
        for (const l of c.lists) this.list(l, NO_STDIN);
        return CLEAN;
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
    if (k === words.length) return CLEAN;
    return this.run(words.slice(k), stdin);
  }

  /**
   * A command's words once its leading assignments are read: the program and its arguments.
   * Returns what its output may carry.
   */
  private run(words: readonly Expanded[], stdin: Stdin): Taint {
    const [program, ...args] = words;
    if (program === undefined) return CLEAN;
    const output = union(stdin.taint, ...args.map((a) => a.taint));
    this.need(
      union(program.taint, program.processes),
      'nothing',
      'the name of the program a command runs',
      HINTS.program,
    );
    const name = programName(program.literal);
    if (name === undefined) {
      this.options('a command', args, 'getopt');
      return output;
    }
    if (this.declared.functions.has(name)) {
      // A function's arguments are its $1, $2, …: checked where the function uses them.
      this.flow.flow(union(...args.map((a) => a.taint)), '@');
      return output;
    }
    const prefix = PREFIXES[name];
    if (prefix !== undefined) return union(output, this.prefix(name, prefix, args, stdin));
    if (SHELLS.has(name)) {
      this.shell(name, args, stdin);
      return output;
    }
    const interpreter = interpreterOf(name);
    if (interpreter !== undefined) {
      this.interpreter(name, interpreter, args, stdin);
      return output;
    }
    this.builtin(name, args, stdin);
    return output;
  }

  // ---- programs -------------------------------------------------------------------------

  /** A program that runs the command its other words name (`sudo`, `env`, `xargs`, …). */
  private prefix(name: string, spec: Prefix, args: readonly Expanded[], stdin: Stdin): Taint {
    const withArgument = [...(spec.takes ?? []), ...(spec.code ?? []), ...(spec.splits ?? [])];
    this.options(name, args, 'builtin', (o) => (takesArgument(o, withArgument) ? 1 : 0));
    let i = 0;
    let viaShell = false;
    let replaces = false;
    for (; i < args.length; i++) {
      const word = args[i]!.literal;
      if (word === undefined || !word.startsWith('-') || word === '-') break;
      if (word === '--') {
        i++;
        break;
      }
      const [option, attached] = splitOption(word);
      if (spec.query?.includes(option)) return CLEAN; // `command -v x` runs nothing
      if (spec.viaShell?.includes(option)) viaShell = true;
      if (name === 'xargs' && (option === '-I' || option === '-i' || option === '--replace'))
        replaces = true;
      const argument = attached === undefined ? args[i + 1] : undefined;
      if (spec.code?.includes(option)) {
        if (argument !== undefined)
          this.reparse([argument], `the command \`${name} ${option}\` runs`);
        if (attached === undefined) i++;
      } else if (spec.splits?.includes(option)) {
        if (argument !== undefined)
          this.need(
            argument.taint,
            'nothing',
            `the command \`${name} ${option}\` splits and runs`,
            HINTS.program,
          );
        if (attached === undefined) i++;
      } else if (takesArgument(option, spec.takes) && attached === undefined) i++;
    }
    if (spec.assigns) {
      while (
        i < args.length &&
        args[i]!.word.parts[0]?.kind === 'text' &&
        this.assignment(args[i]!, {})
      )
        i++;
    }
    i += spec.operands ?? 0;
    const rest = args.slice(i);
    if (spec.joined && rest.length > 0) {
      this.reparse(rest, `the command \`${name}\` runs through a shell`);
      return CLEAN;
    }
    if (viaShell && rest.length > 0) {
      this.reparse(rest, `the command \`${name}\` runs through a shell`);
      return CLEAN;
    }
    if (spec.stdinArgs) {
      const command = rest[0]?.literal === undefined ? undefined : programName(rest[0].literal);
      const intoCode =
        replaces && command !== undefined && (SHELLS.has(command) || command === 'eval');
      this.need(
        stdin.taint,
        intoCode ? 'nothing' : 'shell-words',
        `the arguments \`xargs\` reads from its input`,
        intoCode ? HINTS.stdin : HINTS.shell,
      );
      if (!intoCode)
        this.need(
          stdin.taint,
          'no-options',
          `the arguments \`xargs\` reads from its input`,
          optionHint('xargs'),
        );
    }
    return rest.length > 0 ? this.run(rest, stdin) : CLEAN;
  }

  /** `sh`, `bash`, …: the script of `-c`, a script file, or the script read from stdin. */
  private shell(name: string, args: readonly Expanded[], stdin: Stdin): void {
    this.options(name, args, 'builtin', (o) =>
      o === '--rcfile' || o === '--init-file' || /^[-+][A-Za-z]*[oO]$/.test(o) ? 1 : 0,
    );
    let i = 0;
    let script = false;
    let fromStdin = false;
    for (; i < args.length; i++) {
      const word = args[i]!.literal;
      if (word === undefined) break;
      if (word === '--' || word === '-') {
        i++;
        if (word === '-') fromStdin = true;
        break;
      }
      if (word.startsWith('--')) {
        if (word === '--rcfile' || word === '--init-file') {
          const file = args[i + 1];
          if (file !== undefined)
            this.need(file.taint, 'nothing', `the start-up file of \`${name}\``, HINTS.program);
          i++;
        }
        continue;
      }
      if (!/^[-+][A-Za-z]+$/.test(word)) break;
      if (word.includes('c')) script = true;
      if (word.startsWith('-') && word.includes('s')) fromStdin = true;
      if (/[oO]/.test(word)) i++; // `-o option`, `-O shopt`: an argument follows
    }
    const operands = args.slice(i);
    if (script) {
      const [code, zero, ...positional] = operands;
      if (code !== undefined) this.reparse([code], `the script of \`${name} -c\``);
      if (zero !== undefined) this.flow.flow(zero.taint, '0');
      this.flow.flow(union(...positional.map((p) => p.taint)), '@');
      return;
    }
    if (fromStdin || operands.length === 0) {
      this.flow.flow(union(...operands.map((p) => p.taint)), '@');
      this.stdinScript(name, stdin);
      return;
    }
    const [file, ...positional] = operands;
    this.need(
      union(file!.taint, file!.processes),
      'nothing',
      `the script file \`${name}\` runs`,
      HINTS.program,
    );
    this.flow.flow(union(...positional.map((p) => p.taint)), '@');
  }

  /** A shell reading its script from standard input. */
  private stdinScript(name: string, stdin: Stdin): void {
    for (const text of stdin.visible)
      this.reparseVisible(text, `the script \`${name}\` reads from its input`);
    if (stdin.opaque)
      this.need(
        stdin.taint,
        'nothing',
        `the script \`${name}\` reads from a pipe or file`,
        HINTS.stdin,
      );
  }

  /** A program reading another language's program text. */
  private interpreter(
    name: string,
    spec: Interpreter,
    args: readonly Expanded[],
    stdin: Stdin,
  ): void {
    const style = spec.first === 'code' || spec.first === 'data' ? 'getopt' : 'builtin';
    const one = [...(spec.code ?? []), ...(spec.loads ?? []), ...(spec.takes ?? [])];
    const clusterCode = (o: string) =>
      spec.cluster !== undefined && /^-[A-Za-z]+$/.test(o) && spec.cluster.includes(o.slice(-1));
    this.options(name, args, style, (o) =>
      spec.takesTwo?.includes(o) ? 2 : takesArgument(o, one) || clusterCode(o) ? 1 : 0,
    );
    const construct = `${spec.language} program text (\`${name}\`)`;
    const hint = `${HINTS.code} For example: ${spec.safe}.`;
    const code = (w: Expanded | undefined) => {
      if (w !== undefined) this.need(union(w.taint, w.processes), 'code-word', construct, hint);
    };
    let given = false; // program text or a file of it was given by an option
    const operands: Expanded[] = [];
    let optionsEnd = false;
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      const word = a.literal;
      if (optionsEnd || word === undefined || !/^[-+]./.test(word)) {
        if (
          spec.plusCode &&
          word === undefined &&
          a.word.parts[0]?.kind === 'text' &&
          a.word.parts[0].text.startsWith('+')
        )
          code(a);
        operands.push(a);
        continue;
      }
      if (word === '--') {
        optionsEnd = true;
        continue;
      }
      if (word.startsWith('+')) {
        if (spec.plusCode) code(a);
        continue;
      }
      const [option, attached] = splitOption(word);
      const next = attached === undefined ? args[i + 1] : undefined;
      const consume = () => {
        if (attached === undefined) i++;
      };
      if (spec.code?.includes(option)) {
        given = true;
        code(attached === undefined ? next : a);
        consume();
      } else if (spec.loads?.includes(option)) {
        given = given || option === '-f' || option === '--file' || option === '--from-file';
        const loaded = attached === undefined ? next : a;
        if (loaded !== undefined)
          this.need(
            union(loaded.taint, loaded.processes),
            'nothing',
            `the code \`${name} ${option}\` loads`,
            HINTS.program,
          );
        consume();
      } else if (spec.takesTwo?.includes(option)) {
        i += 2;
      } else if (takesArgument(option, spec.takes)) {
        consume();
      } else if (spec.cluster !== undefined && /^-[A-Za-z]+$/.test(word)) {
        // A cluster such as perl's `-ne`: its last letter may take the program text.
        const last = word[word.length - 1]!;
        if (spec.cluster.includes(last)) {
          given = true;
          code(args[i + 1]);
          i++;
        }
      }
    }
    const [first, ...rest] = operands;
    if (first !== undefined && !given) {
      if (spec.first === 'code') code(first);
      else if (spec.first === 'script' && first.literal !== '-')
        this.need(
          union(first.taint, first.processes),
          'nothing',
          `the script file \`${name}\` runs`,
          HINTS.program,
        );
    }
    if (spec.restCode) for (const r of rest) code(r);
    const script =
      spec.first === 'script' &&
      first !== undefined &&
      first.literal !== '-' &&
      first.literal !== '/dev/stdin';
    if (spec.stdin && !given && !script && (!spec.restCode || rest.length === 0)) {
      const construct = `${spec.language} program text \`${name}\` reads from its input`;
      for (const text of stdin.visible)
        this.need(union(...text.taints), 'code-word', construct, hint);
      this.need(stdin.taint, 'code-word', construct, hint);
    }
  }

  /** Bash's builtins and other commands with something to say about their arguments. */
  private builtin(name: string, args: readonly Expanded[], stdin: Stdin): void {
    const style = NO_OPTIONS.has(name) ? 'none' : BUILTINS.has(name) ? 'builtin' : 'getopt';
    this.options(name, args, style);
    const operands = args.filter((a) => a.literal === undefined || !a.literal.startsWith('-'));
    switch (name) {
      case 'eval':
        this.reparse(args, 'text `eval` runs');
        return;
      case 'trap': {
        const rest = args.filter((a) => a.literal !== '--');
        if (rest[0]?.literal === undefined || !rest[0].literal.startsWith('-'))
          if (rest.length > 1 && rest[0] !== undefined)
            this.reparse([rest[0]], 'the command `trap` runs');
        return;
      }
      case 'source':
      case '.': {
        const [file, ...positional] = operands;
        if (file === undefined) return;
        if (file.literal === '/dev/stdin') this.stdinScript(name, stdin);
        else
          this.need(
            union(file.taint, file.processes),
            'nothing',
            `the file \`${name}\` runs`,
            HINTS.program,
          );
        this.flow.flow(union(...positional.map((p) => p.taint)), '@');
        return;
      }
      case 'let':
        for (const a of args) this.arithUse(a, '`let`');
        return;
      case 'declare':
      case 'typeset':
      case 'local':
      case 'export':
      case 'readonly':
        this.declare(name, args);
        return;
      case 'read':
      case 'mapfile':
      case 'readarray':
        this.read(name, args, stdin);
        return;
      case 'printf': {
        const v = args.findIndex((a) => a.literal === '-v');
        if (v !== -1 && args[v + 1] !== undefined) {
          this.nameUse(args[v + 1]!, '`printf -v`, which takes a variable name');
          const target = variableOf(args[v + 1]!);
          if (target !== undefined)
            this.flow.flow(union(...args.slice(v + 2).map((a) => a.taint)), target);
        }
        return;
      }
      case 'unset':
      case 'getopts':
      case 'wait':
        for (const a of name === 'getopts' ? operands.slice(1, 2) : operands)
          if (name !== 'wait') this.nameUse(a, `\`${name}\`, which takes a variable name`);
        if (name === 'wait') {
          const p = args.findIndex((a) => a.literal === '-p');
          if (p !== -1 && args[p + 1] !== undefined)
            this.nameUse(args[p + 1]!, '`wait -p`, which takes a variable name');
        }
        return;
      case 'set': {
        const dash = args.findIndex((a) => a.literal === '--');
        const positional = dash === -1 ? operands : args.slice(dash + 1);
        this.flow.flow(union(...positional.map((p) => p.taint)), '@');
        return;
      }
      case 'test':
      case '[':
        args.forEach((a, i) => {
          if (a.literal === '-v' && args[i + 1] !== undefined)
            this.nameUse(args[i + 1]!, `\`${name} -v\`, which takes a variable name`);
        });
        return;
      case 'compgen':
      case 'complete':
        args.forEach((a, i) => {
          const next = args[i + 1];
          if (next === undefined) return;
          // `-W` words are expanded again (command substitutions run), `-C` is a command.
          if (a.literal === '-W')
            this.need(next.taint, 'shell-words', `the words \`${name} -W\` expands`, HINTS.shell);
          if (a.literal === '-C') this.reparse([next], `the command \`${name} -C\` runs`);
          if (a.literal === '-F')
            this.need(next.taint, 'nothing', `the function \`${name} -F\` calls`, HINTS.program);
        });
        return;
      case 'alias':
        for (const a of operands) {
          const at = a.word.parts.findIndex((p) => p.kind === 'text' && p.text.includes('='));
          if (at !== -1)
            this.reparse(
              [{ ...a, word: { parts: a.word.parts.slice(at + 1) }, parts: a.parts.slice(at + 1) }],
              'the text of an alias',
            );
        }
        return;
      case 'enable':
      case 'hash':
        for (const a of operands)
          this.need(
            union(a.taint, a.processes),
            'nothing',
            `the code \`${name}\` loads`,
            HINTS.program,
          );
        return;
      case 'find':
        this.find(args);
        return;
      case 'git':
        args.forEach((a, i) => {
          if (a.literal === '-c' && args[i + 1] !== undefined)
            this.need(
              args[i + 1]!.taint,
              'code-word',
              'a setting of `git -c`, which can name a command git runs',
              HINTS.code,
            );
        });
        return;
    }
  }

  /** `declare`, `local`, `export`, …: their flags, assignments and names. */
  private declare(name: string, args: readonly Expanded[]): void {
    const flags = new Set<string>();
    for (const a of args) {
      const word = a.literal;
      if (word !== undefined && /^[-+][a-zA-Z]+$/.test(word)) {
        if (word.startsWith('-')) for (const f of word.slice(1)) flags.add(f);
        continue;
      }
      if (word === '--') continue;
      const assigned =
        a.word.parts[0]?.kind === 'text' &&
        this.assignment(a, {
          integer: flags.has('i'),
          nameref: flags.has('n'),
          assoc: flags.has('A'),
          construct: `\`${name}${flags.has('i') ? ' -i' : ''}\``,
        });
      if (!assigned) this.nameUse(a, `\`${name}\`, which takes a variable name`);
    }
  }

  /** `read`, `mapfile`: what they read from stdin flows into the variables they name. */
  private read(name: string, args: readonly Expanded[], stdin: Stdin): void {
    const takes =
      name === 'read'
        ? ['-d', '-i', '-n', '-N', '-p', '-t', '-u']
        : ['-d', '-n', '-O', '-s', '-u', '-c'];
    const targets: Expanded[] = [];
    for (let i = 0; i < args.length; i++) {
      const word = args[i]!.literal;
      if (word === '-a' && name === 'read') {
        if (args[i + 1] !== undefined) targets.push(args[i + 1]!);
        i++;
      } else if (word === '-C') {
        if (args[i + 1] !== undefined)
          this.reparse([args[i + 1]!], '`mapfile -C`, a command it runs');
        i++;
      } else if (word !== undefined && takes.includes(word)) i++;
      else if (word === undefined || !word.startsWith('-')) targets.push(args[i]!);
    }
    if (targets.length === 0) this.flow.flow(stdin.taint, name === 'read' ? 'REPLY' : 'MAPFILE');
    for (const t of targets) {
      this.nameUse(t, `\`${name}\`, which takes a variable name`);
      const target = variableOf(t);
      if (target !== undefined) this.flow.flow(stdin.taint, target);
    }
  }

  /** `find … -exec COMMAND… ;`: the command is one of its own. */
  private find(args: readonly Expanded[]): void {
    for (let i = 0; i < args.length; i++) {
      const word = args[i]!.literal;
      if (word !== '-exec' && word !== '-execdir' && word !== '-ok' && word !== '-okdir') continue;
      let end = i + 1;
      while (end < args.length && args[end]!.literal !== ';' && args[end]!.literal !== '+') end++;
      this.run(args.slice(i + 1, end), NO_STDIN);
      i = end;
    }
  }

  // ---- the rules ------------------------------------------------------------------------

  /**
   * The option rule: a word that begins with a value, in option position (before `--`; for
   * builtins and most interpreters before the first operand), must not begin with `-`.
   */
  private options(
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
  private arithUse(word: Expanded, construct: string): void {
    this.need(word.taint, 'integer', construct, HINTS.integer);
    // Names in its literal text are variables whose values bash reads as arithmetic too.
    for (const part of word.word.parts) {
      if (part.kind !== 'text') continue;
      for (const name of part.text.match(/(?<![\w#$])[A-Za-z_]\w*/g) ?? [])
        this.need(new Set([name]), 'integer', construct, HINTS.integer);
    }
  }

  /** `word` names a variable: the values it carries must be names. */
  private nameUse(word: Expanded, construct: string): void {
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
  private assignment(
    a: Expanded,
    how: { integer?: boolean; nameref?: boolean; assoc?: boolean; construct?: string },
  ): boolean {
    const split = splitAssignment(a.word);
    if (split === undefined) return false;
    const { name, index, value } = split;
    const valueTaint = union(...value.map((p) => this.partTaint(a, p)));
    this.flow.flow(valueTaint, name);
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
        this.flow.flow(e.taint, name);
      }
    }
    if (this.reparsed) this.oneWord(valueExpanded, 'the value of an assignment');
    return true;
  }

  // ---- text read again ------------------------------------------------------------------

  /** `words`, joined by spaces, are read again as shell code (`eval`, `sh -c`, `ssh`, …). */
  private reparse(words: readonly Expanded[], construct: string): void {
    this.reparseVisible(this.visibleOf(words), construct);
  }

  private reparseVisible(text: Visible, construct: string): void {
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
    this.declared.collect(inner.list);
    new ShellAnalyzer(this.flow, this.declared, text.taints, inner.holes, this.depth + 1).list(
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
        this.flow.flow(operand.taint, name);
        return union(taint, operand.taint);
      default:
        return union(taint, operand.taint);
    }
  }
}

// ---- helpers ----------------------------------------------------------------------------

/** How to keep a value from being an option of `program`. */
function optionHint(program: string): string {
  return `Write -- before it (${program} … -- {value}) so that it cannot be taken for an option, or mark the <param> allow_options="true" if its values are meant to be options.`;
}

/** The text of a word without expansions, else undefined. */
function literalOf(word: Word): string | undefined {
  return word.parts.every((p) => p.kind === 'text')
    ? word.parts.map((p) => (p as { text: string }).text).join('')
    : undefined;
}

/** The program a literal word names (`/usr/bin/env` → `env`), or undefined. */
function programName(literal: string | undefined): string | undefined {
  if (literal === undefined || literal === '') return undefined;
  return literal.slice(literal.lastIndexOf('/') + 1);
}

/** `--name=value` → [`--name`, `value`]; `-ovalue` is left whole (short options vary). */
function splitOption(word: string): [string, string | undefined] {
  if (word.startsWith('--')) {
    const eq = word.indexOf('=');
    return eq === -1 ? [word, undefined] : [word.slice(0, eq), word.slice(eq + 1)];
  }
  return [word, undefined];
}

/** Whether `option` takes an argument by `takes` (`-n`, or the cluster `-xn` ending in it). */
function takesArgument(option: string, takes: readonly string[] | undefined): boolean {
  if (takes === undefined) return false;
  if (takes.includes(option)) return true;
  return /^-[A-Za-z]{2,}$/.test(option) && takes.includes(`-${option[option.length - 1]!}`);
}

/** The variable a name word names (`x`, `x[i]` → `x`), when it is literal at its start. */
function variableOf(a: Expanded): string | undefined {
  const first = a.word.parts[0];
  if (first?.kind !== 'text') return undefined;
  return /^[A-Za-z_]\w*/.exec(first.text)?.[0];
}

/**
 * An assignment word taken apart: its name, the parts of its index (`NAME[…]=`), the parts of
 * its value; undefined when the word is no assignment.
 */
function splitAssignment(
  word: Word,
): { name: string; index?: WordPart[]; value: WordPart[] } | undefined {
  const [first, ...rest] = word.parts;
  if (first?.kind !== 'text' || first.quoted) return undefined;
  const head = /^([A-Za-z_]\w*)(\+?=|\[)/.exec(first.text);
  if (head === null) return undefined;
  const name = head[1]!;
  const after = first.text.slice(head[0].length);
  if (head[2] !== '[') {
    return { name, value: [...textPart(after), ...rest] };
  }
  // NAME[ … ]= : the index runs to the `]` before `=` or `+=`.
  const index: WordPart[] = [];
  const parts: WordPart[] = [...textPart(after), ...rest];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.kind === 'text' && !part.quoted) {
      const close = /\]\+?=/.exec(part.text);
      if (close !== null) {
        index.push(...textPart(part.text.slice(0, close.index)));
        const value = [
          ...textPart(part.text.slice(close.index + close[0].length)),
          ...parts.slice(i + 1),
        ];
        return { name, index, value };
      }
    }
    index.push(part);
  }
  return undefined;
}

function textPart(text: string): WordPart[] {
  return text === '' ? [] : [{ kind: 'text', text, quoted: false }];
}

/** Calls `fn` on every command of `list`, nested ones included. */
function forEachCommand(list: CommandList, fn: (c: Command) => void): void {
  for (const p of list.pipelines)
    for (const c of p.commands) {
      fn(c);
      if (c.kind === 'compound') for (const l of c.lists) forEachCommand(l, fn);
    }
}
