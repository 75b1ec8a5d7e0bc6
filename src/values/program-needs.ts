/**
 * What each program a command runs does with its arguments, as far as values are concerned
 * (the table is `shell-programs.ts`): a prefix runs the command its other words name, a shell
 * runs its `-c` script, script file or input, an interpreter reads program text, and bash's
 * builtins take names, arithmetic, code (`eval`, `trap`, `source`) or positional parameters.
 * Each rule asks its needs of the analysis it is part of (`AnalysisScope`).
 */
import {
  HINTS,
  NO_STDIN,
  optionHint,
  type AnalysisScope,
  type Expanded,
  type Stdin,
} from './analysis-scope.js';
import {
  BUILTINS,
  interpreterOf,
  NO_OPTIONS,
  PREFIXES,
  SHELLS,
  type Interpreter,
  type Prefix,
} from './shell-programs.js';
import { leadingText, programName, splitOption, takesArgument, variableOf } from './shell-words.js';
import { CLEAN, fileTaint, streamTaint, union, type Taint } from './value-flow.js';

/** The rules of programs, applied to the analysis `scope`. */
export class ProgramNeeds {
  constructor(private readonly scope: AnalysisScope) {}

  /**
   * Applies the rules of program `name` to its `args` (standard input `stdin`); returns what the
   * command it runs may output, beyond its arguments and input.
   */
  apply(name: string, args: readonly Expanded[], stdin: Stdin): Taint {
    const prefix = PREFIXES[name];
    if (prefix !== undefined) return this.prefix(name, prefix, args, stdin);
    if (SHELLS.has(name)) this.shell(name, args, stdin);
    else {
      const interpreter = interpreterOf(name);
      if (interpreter !== undefined) this.interpreter(name, interpreter, args, stdin);
      else this.builtin(name, args, stdin);
    }
    return CLEAN;
  }

  /** A program that runs the command its other words name (`sudo`, `env`, `xargs`, …). */
  private prefix(name: string, spec: Prefix, args: readonly Expanded[], stdin: Stdin): Taint {
    const withArgument = [...(spec.takes ?? []), ...(spec.code ?? []), ...(spec.splits ?? [])];
    this.scope.options(name, args, 'builtin', (o) => (takesArgument(o, withArgument) ? 1 : 0));
    let i = 0;
    let viaShell = false;
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
      const argument = attached === undefined ? args[i + 1] : undefined;
      if (spec.code?.includes(option)) {
        if (argument !== undefined)
          this.scope.reparse([argument], `the command \`${name} ${option}\` runs`);
        if (attached === undefined) i++;
      } else if (spec.splits?.includes(option)) {
        if (argument !== undefined)
          this.scope.need(
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
        this.scope.assignment(args[i]!, {})
      )
        i++;
    }
    i += spec.operands ?? 0;
    const rest = args.slice(i);
    if (spec.joined && rest.length > 0) {
      this.scope.reparse(rest, `the command \`${name}\` runs through a shell`);
      return CLEAN;
    }
    if (viaShell && rest.length > 0) {
      this.scope.reparse(rest, `the command \`${name}\` runs through a shell`);
      return CLEAN;
    }
    if (spec.stdinArgs) {
      const command = rest[0]?.literal === undefined ? undefined : programName(rest[0].literal);
      // Its input becomes arguments of the command, appended or put in place of `-I`'s text:
      // in a shell's, an interpreter's or a prefix's arguments they may be code (`xargs sh -c`).
      const intoCode =
        command === undefined ||
        SHELLS.has(command) ||
        interpreterOf(command) !== undefined ||
        PREFIXES[command] !== undefined ||
        ['eval', 'source', '.', 'trap'].includes(command);
      this.scope.need(
        stdin.taint,
        intoCode ? 'nothing' : 'shell-words',
        `the arguments \`xargs\` reads from its input`,
        intoCode ? HINTS.stdin : HINTS.shell,
      );
      if (!intoCode)
        this.scope.need(
          stdin.taint,
          'no-options',
          `the arguments \`xargs\` reads from its input`,
          optionHint('xargs'),
        );
    }
    return rest.length > 0 ? this.scope.run(rest, stdin) : CLEAN;
  }

  /** `sh`, `bash`, …: the script of `-c`, a script file, or the script read from stdin. */
  private shell(name: string, args: readonly Expanded[], stdin: Stdin): void {
    this.scope.options(name, args, 'builtin', (o) =>
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
            this.scope.need(
              file.taint,
              'nothing',
              `the start-up file of \`${name}\``,
              HINTS.program,
            );
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
      if (code !== undefined) this.scope.reparse([code], `the script of \`${name} -c\``);
      if (zero !== undefined) this.scope.flow(zero.taint, '0');
      this.scope.flow(union(...positional.map((p) => p.taint)), '@');
      return;
    }
    if (fromStdin || operands.length === 0) {
      this.scope.flow(union(...operands.map((p) => p.taint)), '@');
      this.stdinScript(name, stdin);
      return;
    }
    const [file, ...positional] = operands;
    this.scriptFile(file!, name, stdin, 'nothing');
    this.scope.flow(union(...positional.map((p) => p.taint)), '@');
  }

  /**
   * A file whose text `name` runs: a value must not choose it, and what the script wrote into it
   * (or into the stream it names: `/dev/stdin`, `/dev/fd/3`) must have `shape` there, since it
   * is read as code.
   */
  private scriptFile(
    file: Expanded,
    name: string,
    stdin: Stdin,
    shape: 'nothing' | 'code-word',
    language?: Interpreter,
  ): void {
    const construct = `the script file \`${name}\` runs`;
    this.scope.need(union(file.taint, file.processes), 'nothing', construct, HINTS.program);
    const path = file.literal;
    const fd =
      path === undefined ? undefined : /^\/(?:dev|proc\/(?:self|\d+))\/fd\/(\d+)$/.exec(path)?.[1];
    if (path === '-' || path === '/dev/stdin' || fd === '0') {
      if (language === undefined) this.stdinScript(name, stdin);
      else this.stdinCode(name, language, stdin);
      return;
    }
    const written = fd !== undefined ? streamTaint(fd) : fileTaint(path);
    const hint =
      language === undefined ? HINTS.stdin : `${HINTS.code} For example: ${language.safe}.`;
    this.scope.need(written, shape, `${construct}, which the script writes values into`, hint);
  }

  /** A shell reading its script from standard input. */
  private stdinScript(name: string, stdin: Stdin): void {
    for (const text of stdin.visible)
      this.scope.reparseVisible(text, `the script \`${name}\` reads from its input`);
    // A pipe or a file, or the input the script gave itself with `exec <…`: the text read
    // cannot be seen, so no value may be in it.
    const opaque = union(stdin.opaque ? stdin.taint : CLEAN, streamTaint('0'));
    this.scope.need(
      opaque,
      'nothing',
      `the script \`${name}\` reads from a pipe or file`,
      HINTS.stdin,
    );
  }

  /** A program reading its program text (in `language`) from standard input. */
  private stdinCode(name: string, language: Interpreter, stdin: Stdin): void {
    const construct = `${language.language} program text \`${name}\` reads from its input`;
    const hint = `${HINTS.code} For example: ${language.safe}.`;
    for (const text of stdin.visible)
      this.scope.need(union(...text.taints), 'code-word', construct, hint);
    this.scope.need(union(stdin.taint, streamTaint('0')), 'code-word', construct, hint);
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
    this.scope.options(name, args, style, (o) =>
      spec.takesTwo?.includes(o) ? 2 : takesArgument(o, one) || clusterCode(o) ? 1 : 0,
    );
    const construct = `${spec.language} program text (\`${name}\`)`;
    const hint = `${HINTS.code} For example: ${spec.safe}.`;
    const code = (w: Expanded | undefined) => {
      if (w !== undefined)
        this.scope.need(union(w.taint, w.processes), 'code-word', construct, hint);
    };
    let given = false; // program text or a file of it was given by an option
    const operands: Expanded[] = [];
    let optionsEnd = false;
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      const word = a.literal;
      const lead = leadingText(a);
      if (!optionsEnd && word === undefined && /^[-+]./.test(lead)) {
        // An option with a value in its attached argument (`--eval={x}`, `-e"{x}"`, `+{x}`).
        const option = lead.startsWith('--') ? lead.split('=')[0]! : lead.slice(0, 2);
        if (lead.startsWith('+') ? spec.plusCode : spec.code?.includes(option)) code(a);
        else if (spec.loads?.includes(option))
          this.scope.need(
            a.taint,
            'nothing',
            `the code \`${name} ${option}\` loads`,
            HINTS.program,
          );
        else if (spec.cluster?.includes(option.slice(1)) === true) code(a);
        continue;
      }
      if (optionsEnd || word === undefined || !/^[-+]./.test(word)) {
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
          this.scope.need(
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
      else if (spec.first === 'script') this.scriptFile(first, name, stdin, 'code-word', spec);
    }
    if (spec.restCode) for (const r of rest) code(r);
    const script = spec.first === 'script' && first !== undefined;
    if (spec.stdin && !given && !script && (!spec.restCode || rest.length === 0))
      this.stdinCode(name, spec, stdin);
  }

  /** Bash's builtins and other commands with something to say about their arguments. */
  private builtin(name: string, args: readonly Expanded[], stdin: Stdin): void {
    const style = NO_OPTIONS.has(name) ? 'none' : BUILTINS.has(name) ? 'builtin' : 'getopt';
    this.scope.options(name, args, style);
    const operands = args.filter((a) => a.literal === undefined || !a.literal.startsWith('-'));
    switch (name) {
      case 'eval':
        this.scope.reparse(args, 'text `eval` runs');
        return;
      case 'trap': {
        const rest = args.filter((a) => a.literal !== '--');
        if (rest[0]?.literal === undefined || !rest[0].literal.startsWith('-'))
          if (rest.length > 1 && rest[0] !== undefined)
            this.scope.reparse([rest[0]], 'the command `trap` runs');
        return;
      }
      case 'source':
      case '.': {
        const [file, ...positional] = operands;
        if (file === undefined) return;
        this.scriptFile(file, name, stdin, 'nothing');
        this.scope.flow(union(...positional.map((p) => p.taint)), '@');
        return;
      }
      case 'let':
        for (const a of args) this.scope.arithUse(a, '`let`');
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
          this.scope.nameUse(args[v + 1]!, '`printf -v`, which takes a variable name');
          const target = variableOf(args[v + 1]!);
          if (target !== undefined)
            this.scope.flow(union(...args.slice(v + 2).map((a) => a.taint)), target);
        }
        return;
      }
      case 'unset':
      case 'getopts':
      case 'wait':
        for (const a of name === 'getopts' ? operands.slice(1, 2) : operands)
          if (name !== 'wait') this.scope.nameUse(a, `\`${name}\`, which takes a variable name`);
        if (name === 'wait') {
          const p = args.findIndex((a) => a.literal === '-p');
          if (p !== -1 && args[p + 1] !== undefined)
            this.scope.nameUse(args[p + 1]!, '`wait -p`, which takes a variable name');
        }
        return;
      case 'set': {
        const dash = args.findIndex((a) => a.literal === '--');
        const positional = dash === -1 ? operands : args.slice(dash + 1);
        this.scope.flow(union(...positional.map((p) => p.taint)), '@');
        return;
      }
      case 'test':
      case '[':
        args.forEach((a, i) => {
          if (a.literal === '-v' && args[i + 1] !== undefined)
            this.scope.nameUse(args[i + 1]!, `\`${name} -v\`, which takes a variable name`);
        });
        return;
      case 'compgen':
      case 'complete':
        args.forEach((a, i) => {
          const next = args[i + 1];
          if (next === undefined) return;
          // `-W` words are expanded again (command substitutions run), `-C` is a command.
          if (a.literal === '-W')
            this.scope.need(
              next.taint,
              'shell-words',
              `the words \`${name} -W\` expands`,
              HINTS.shell,
            );
          if (a.literal === '-C') this.scope.reparse([next], `the command \`${name} -C\` runs`);
          if (a.literal === '-F')
            this.scope.need(
              next.taint,
              'nothing',
              `the function \`${name} -F\` calls`,
              HINTS.program,
            );
        });
        return;
      case 'alias':
        for (const a of operands) {
          const at = a.word.parts.findIndex((p) => p.kind === 'text' && p.text.includes('='));
          if (at !== -1)
            this.scope.reparse(
              [{ ...a, word: { parts: a.word.parts.slice(at + 1) }, parts: a.parts.slice(at + 1) }],
              'the text of an alias',
            );
        }
        return;
      case 'enable':
      case 'hash':
        for (const a of operands)
          this.scope.need(
            union(a.taint, a.processes),
            'nothing',
            `the code \`${name}\` loads`,
            HINTS.program,
          );
        return;
      case 'find':
        this.find(args);
        return;
      case 'tee':
        // What it reads lands in the files it names.
        for (const f of operands) this.scope.writeFile(f.literal, stdin.taint);
        return;
      case 'cp':
      case 'mv':
      case 'install':
      case 'ln':
      case 'rsync': {
        // The last operand is where the others' texts land.
        const target = operands[operands.length - 1];
        for (const source of operands.slice(0, -1))
          this.scope.writeFile(target?.literal, fileTaint(source.literal));
        return;
      }
      case 'git':
        args.forEach((a, i) => {
          if (a.literal === '-c' && args[i + 1] !== undefined)
            this.scope.need(
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
        this.scope.assignment(a, {
          integer: flags.has('i'),
          nameref: flags.has('n'),
          assoc: flags.has('A'),
          construct: `\`${name}${flags.has('i') ? ' -i' : ''}\``,
        });
      if (!assigned) this.scope.nameUse(a, `\`${name}\`, which takes a variable name`);
    }
  }

  /** `read`, `mapfile`: what they read from stdin flows into the variables they name. */
  private read(name: string, args: readonly Expanded[], stdin: Stdin): void {
    const takes =
      name === 'read'
        ? ['-d', '-i', '-n', '-N', '-p', '-t', '-u']
        : ['-d', '-n', '-O', '-s', '-u', '-c'];
    const targets: Expanded[] = [];
    // What it reads: its input, or the descriptor `-u` names (the script may have given either
    // values with `exec`).
    let input = union(stdin.taint, streamTaint('0'));
    for (let i = 0; i < args.length; i++) {
      const word = args[i]!.literal;
      if (word === '-u') input = streamTaint(args[i + 1]?.literal);
      if (word === '-a' && name === 'read') {
        if (args[i + 1] !== undefined) targets.push(args[i + 1]!);
        i++;
      } else if (word === '-C') {
        if (args[i + 1] !== undefined)
          this.scope.reparse([args[i + 1]!], '`mapfile -C`, a command it runs');
        i++;
      } else if (word !== undefined && takes.includes(word)) i++;
      else if (word === undefined || !word.startsWith('-')) targets.push(args[i]!);
    }
    if (targets.length === 0) this.scope.flow(input, name === 'read' ? 'REPLY' : 'MAPFILE');
    for (const t of targets) {
      this.scope.nameUse(t, `\`${name}\`, which takes a variable name`);
      const target = variableOf(t);
      if (target !== undefined) this.scope.flow(input, target);
    }
  }

  /** `find … -exec COMMAND… ;`: the command is one of its own. */
  private find(args: readonly Expanded[]): void {
    for (let i = 0; i < args.length; i++) {
      const word = args[i]!.literal;
      if (word !== '-exec' && word !== '-execdir' && word !== '-ok' && word !== '-okdir') continue;
      let end = i + 1;
      while (end < args.length && args[end]!.literal !== ';' && args[end]!.literal !== '+') end++;
      this.scope.run(args.slice(i + 1, end), NO_STDIN);
      i = end;
    }
  }
}
