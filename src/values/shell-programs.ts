/**
 * What programs a shell command starts do with their arguments, as far as values are concerned:
 * which run another command (prefixes: `sudo`, `env`, `timeout`, `xargs`, …), which are shells
 * (their `-c` script, script file, or standard input is shell code), which read another
 * language's program text (`python -c`, `awk '…'`, `jq '…'`, `psql -c`, …), and which variables
 * choose code when a value is assigned to them. Data only: `shell-analysis.ts` applies it.
 */

/** A program that runs the command its remaining arguments name. */
export interface Prefix {
  /** Options that take an argument (`-u user`, `--user=user`). */
  takes?: readonly string[];
  /** Options whose argument is shell code (`su -c`, `flock -c`, `script -c`). */
  code?: readonly string[];
  /** Options after which the command runs through a shell (`sudo -s`, `sudo -i`). */
  viaShell?: readonly string[];
  /** Options after which nothing runs: the arguments are looked up (`command -v`). */
  query?: readonly string[];
  /** Options whose argument is split into a command (`env -S`): a value there chooses code. */
  splits?: readonly string[];
  /** Operands before the command (`timeout DURATION`, `chroot DIR`, `ssh HOST`). */
  operands?: number;
  /** `NAME=VALUE` words before the command set its environment (`env`). */
  assigns?: boolean;
  /** The rest is joined into one text a shell runs (`ssh host cmd…`, `watch cmd…`). */
  joined?: boolean;
  /** Its standard input becomes the command's arguments (`xargs`). */
  stdinArgs?: boolean;
}

const SUDO_TAKES = [
  '-u',
  '-g',
  '-h',
  '-p',
  '-C',
  '-D',
  '-r',
  '-t',
  '-U',
  '-T',
  '--user',
  '--group',
  '--host',
  '--prompt',
  '--chdir',
  '--role',
  '--type',
  '--other-user',
  '--command-timeout',
  '--close-from',
];

/** Programs that run another command. */
export const PREFIXES: Readonly<Record<string, Prefix>> = {
  command: { query: ['-v', '-V'] },
  builtin: {},
  exec: { takes: ['-a'] },
  coproc: {},
  env: {
    takes: ['-u', '--unset', '-C', '--chdir'],
    splits: ['-S', '--split-string'],
    assigns: true,
  },
  nice: { takes: ['-n', '--adjustment'] },
  nohup: {},
  time: { takes: ['-f', '--format', '-o', '--output'] },
  timeout: { takes: ['-s', '--signal', '-k', '--kill-after'], operands: 1 },
  stdbuf: { takes: ['-i', '-o', '-e', '--input', '--output', '--error'] },
  setsid: {},
  chroot: { takes: ['--userspec', '--groups'], operands: 1 },
  ionice: { takes: ['-c', '-n', '-p', '-P', '-u', '--class', '--classdata'] },
  taskset: { operands: 1 },
  chrt: { operands: 1 },
  nsenter: { takes: ['-t', '--target', '-S', '-G', '-r', '-w', '--setuid', '--setgid'] },
  unshare: { takes: ['--propagation', '-S', '-G', '--setuid', '--setgid', '-R', '--root', '-w'] },
  strace: { takes: ['-e', '-o', '-p', '-s', '-u', '-E', '-O', '-a', '-b', '-P', '-I', '-S', '-X'] },
  ltrace: { takes: ['-e', '-o', '-p', '-s', '-u', '-n', '-l', '-A', '-D'] },
  valgrind: {},
  tini: {},
  'dumb-init': {},
  busybox: {},
  sudo: { takes: SUDO_TAKES, viaShell: ['-s', '-i', '--shell', '--login'] },
  doas: { takes: ['-u', '-C'], viaShell: ['-s'] },
  su: {
    takes: ['-s', '--shell', '-g', '--group', '-G', '--supp-group', '-w'],
    code: ['-c', '--command', '--session-command'],
    operands: 1,
  },
  runuser: {
    takes: ['-u', '--user', '-s', '--shell', '-g', '--group', '-G', '--supp-group', '-w'],
    code: ['-c', '--command', '--session-command'],
  },
  flock: {
    takes: ['-w', '--wait', '--timeout', '-E', '--conflict-exit-code'],
    code: ['-c', '--command'],
    operands: 1,
  },
  script: { takes: ['-t', '-T', '-I', '-O', '-B', '-E', '-m'], code: ['-c', '--command'] },
  xargs: {
    takes: [
      '-a',
      '--arg-file',
      '-d',
      '--delimiter',
      '-E',
      '-I',
      '--replace',
      '-L',
      '--max-lines',
      '-n',
      '--max-args',
      '-P',
      '--max-procs',
      '-s',
      '--max-chars',
      '--process-slot-var',
    ],
    stdinArgs: true,
  },
  ssh: {
    takes: [
      '-B',
      '-b',
      '-c',
      '-D',
      '-E',
      '-e',
      '-F',
      '-I',
      '-i',
      '-J',
      '-L',
      '-l',
      '-m',
      '-O',
      '-o',
      '-P',
      '-p',
      '-Q',
      '-R',
      '-S',
      '-W',
      '-w',
    ],
    operands: 1,
    joined: true,
  },
  watch: { takes: ['-n', '--interval', '-q', '--equexit'], joined: true },
  parallel: { joined: true },
};

/** Programs that are shells: `-c` makes their first operand a script. */
export const SHELLS: ReadonlySet<string> = new Set([
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'ksh93',
  'mksh',
  'pdksh',
  'ash',
  'yash',
  'posh',
  'rbash',
  'fish',
]);

/** A program that reads another language's program text. */
export interface Interpreter {
  /** How messages name it: `Python`, `the awk program`. */
  language: string;
  /** Options whose argument is program text (`-c`, `-e`, `--eval`). */
  code?: readonly string[];
  /** Short options that, at the end of a cluster (`perl -ne '…'`), take the program text. */
  cluster?: string;
  /** Options whose argument names code to run (a script file, a module). */
  loads?: readonly string[];
  /** Other options that take an argument. */
  takes?: readonly string[];
  /** Options that take two (`jq --arg name value`). */
  takesTwo?: readonly string[];
  /** The first operand: a file of code, program text, or data (a database). */
  first: 'script' | 'code' | 'data';
  /** Operands after the first are program text too (`sqlite3 DB SQL…`). */
  restCode?: boolean;
  /** With no program text and no script, it reads its code from standard input. */
  stdin: boolean;
  /** Words starting with `+` are commands (`vim +cmd`). */
  plusCode?: boolean;
  /** How to pass a value safely, `{value}` for its template. */
  safe: string;
}

const PYTHON: Interpreter = {
  language: 'Python',
  code: ['-c'],
  cluster: 'c',
  loads: ['-m'],
  takes: ['-W', '-X', '-Q'],
  first: 'script',
  stdin: true,
  safe: `python3 -c 'import sys; print(sys.argv[1])' {value}`,
};
const NODE: Interpreter = {
  language: 'JavaScript',
  code: ['-e', '--eval', '-p', '--print'],
  cluster: 'ep',
  loads: ['-r', '--require', '--import', '--loader', '--experimental-loader'],
  takes: ['--input-type', '--title', '--env-file', '-C', '--conditions'],
  first: 'script',
  stdin: true,
  safe: `node -e 'console.log(process.argv[1])' {value}`,
};
const PERL: Interpreter = {
  language: 'Perl',
  code: ['-e', '-E'],
  cluster: 'eE',
  loads: ['-M', '-m'],
  takes: ['-I'],
  first: 'script',
  stdin: true,
  safe: `perl -e 'print $ARGV[0]' {value}`,
};
const AWK: Interpreter = {
  language: 'awk',
  code: ['-e', '--source'],
  loads: ['-f', '--file', '-i', '--include', '-l', '--load'],
  takes: ['-F', '-v', '--field-separator', '--assign'],
  first: 'code',
  stdin: false,
  safe: `awk -v x={value} 'BEGIN { print x }'`,
};
const SED: Interpreter = {
  language: 'sed',
  code: ['-e', '--expression'],
  loads: ['-f', '--file'],
  takes: ['-l', '--line-length'],
  first: 'code',
  stdin: false,
  safe: `awk -v x={value} '{ gsub(/old/, x); print }' (sed has no way to take a value as data)`,
};
const JQ: Interpreter = {
  language: 'jq',
  loads: ['-f', '--from-file', '-L'],
  takes: ['--indent'],
  takesTwo: ['--arg', '--argjson', '--slurpfile', '--rawfile'],
  first: 'code',
  stdin: false,
  safe: `jq --arg x {value} '.[$x]'`,
};
const SQL_SAFE = `psql -v x={value} <<'SQL'\nselect :'x';\nSQL (values as variables, never inside the SQL)`;

/** Programs that read another language's program text, by name. */
const INTERPRETERS: Readonly<Record<string, Interpreter>> = {
  python: PYTHON,
  pypy: PYTHON,
  node: NODE,
  nodejs: NODE,
  bun: NODE,
  perl: PERL,
  ruby: {
    language: 'Ruby',
    code: ['-e'],
    cluster: 'e',
    loads: ['-r'],
    takes: ['-I', '-C', '-E'],
    first: 'script',
    stdin: true,
    safe: `ruby -e 'puts ARGV[0]' {value}`,
  },
  php: {
    language: 'PHP',
    code: ['-r', '-R', '-B', '-E'],
    loads: ['-f'],
    takes: ['-c', '-d', '-z', '-t'],
    first: 'script',
    stdin: true,
    safe: `php -r 'echo $argv[1];' {value}`,
  },
  lua: {
    language: 'Lua',
    code: ['-e'],
    loads: ['-l'],
    first: 'script',
    stdin: true,
    safe: `lua -e 'print(arg[1])' {value}`,
  },
  rscript: {
    language: 'R',
    code: ['-e'],
    first: 'script',
    stdin: false,
    safe: `Rscript -e 'print(commandArgs(TRUE)[1])' {value}`,
  },
  r: {
    language: 'R',
    code: ['-e'],
    first: 'data',
    stdin: true,
    safe: `Rscript -e 'print(commandArgs(TRUE)[1])' {value}`,
  },
  awk: AWK,
  gawk: AWK,
  mawk: AWK,
  nawk: AWK,
  sed: SED,
  gsed: SED,
  jq: JQ,
  gojq: JQ,
  jaq: JQ,
  yq: JQ,
  psql: {
    language: 'SQL',
    code: ['-c', '--command'],
    loads: ['-f', '--file'],
    takes: [
      '-d',
      '--dbname',
      '-h',
      '--host',
      '-p',
      '--port',
      '-U',
      '--username',
      '-o',
      '--output',
      '-F',
      '--field-separator',
      '-R',
      '--record-separator',
      '-T',
      '--table-attr',
      '-P',
      '--pset',
      '-L',
      '--log-file',
      '-v',
      '--set',
      '--variable',
    ],
    first: 'data',
    stdin: true,
    safe: SQL_SAFE,
  },
  sqlite3: {
    language: 'SQL',
    code: ['-cmd'],
    loads: ['-init'],
    takes: [
      '-separator',
      '-newline',
      '-nullvalue',
      '-vfs',
      '-mmap',
      '-pagecache',
      '-lookaside',
      '-maxsize',
      '-heap',
    ],
    first: 'data',
    restCode: true,
    stdin: true,
    safe: 'a tool that binds SQL parameters (values as parameters, never inside the SQL)',
  },
  mysql: {
    language: 'SQL',
    code: ['-e', '--execute'],
    takes: ['-u', '--user', '-h', '--host', '-P', '--port', '-D', '--database', '-S', '--socket'],
    first: 'data',
    stdin: true,
    safe: 'a tool that binds SQL parameters (values as parameters, never inside the SQL)',
  },
  bc: { language: 'bc', first: 'script', stdin: true, safe: `echo "$(( {value} + 0 ))"` },
  dc: {
    language: 'dc',
    code: ['-e', '--expression'],
    loads: ['-f', '--file'],
    first: 'script',
    stdin: true,
    safe: `echo "$(( {value} + 0 ))"`,
  },
  osascript: {
    language: 'AppleScript',
    code: ['-e'],
    first: 'script',
    stdin: true,
    safe: `osascript -e 'on run argv' -e 'return item 1 of argv' -e 'end run' {value}`,
  },
  expect: {
    language: 'Tcl',
    code: ['-c'],
    loads: ['-f'],
    first: 'script',
    stdin: true,
    safe: `expect -c 'puts [lindex $argv 0]' {value}`,
  },
  tclsh: { language: 'Tcl', first: 'script', stdin: true, safe: `tclsh script.tcl {value}` },
  gdb: {
    language: 'gdb',
    code: ['-ex', '--eval-command', '-iex', '--init-eval-command'],
    loads: ['-x', '--command'],
    first: 'data',
    stdin: false,
    safe: 'a gdb script in the project that reads its argument',
  },
  vim: {
    language: 'Vim script',
    code: ['-c', '--cmd'],
    first: 'data',
    stdin: false,
    plusCode: true,
    safe: 'a script that reads the value from a file',
  },
  emacs: {
    language: 'Emacs Lisp',
    code: ['--eval'],
    loads: ['-l', '--load'],
    first: 'data',
    stdin: false,
    safe: 'a script that reads the value from a file',
  },
  pwsh: {
    language: 'PowerShell',
    code: ['-c', '-Command', '-command', '-EncodedCommand'],
    loads: ['-f', '-File', '-file'],
    first: 'script',
    stdin: true,
    safe: `pwsh -c '$args[0]' {value}`,
  },
  m4: { language: 'm4', first: 'script', stdin: true, safe: 'm4 -Dx={value} template.m4' },
};

/** The interpreter a program name stands for: `python3.11` → Python, `vi` → Vim script. */
export function interpreterOf(program: string): Interpreter | undefined {
  const name = program.toLowerCase();
  const direct = INTERPRETERS[name];
  if (direct !== undefined) return direct;
  const family = /^(python|pypy|perl|ruby|php|lua|luajit|node)[\d.]*$/.exec(name)?.[1];
  if (family !== undefined) return INTERPRETERS[family === 'luajit' ? 'lua' : family];
  if (['vi', 'nvim', 'ex', 'view', 'gvim', 'vimdiff'].includes(name)) return INTERPRETERS.vim;
  if (name === 'powershell') return INTERPRETERS.pwsh;
  if (name === 'sqlite') return INTERPRETERS.sqlite3;
  if (name === 'mariadb') return INTERPRETERS.mysql;
  if (name === 'wish') return INTERPRETERS.tclsh;
  return undefined;
}

/**
 * Bash's builtins, which read options only before their first operand (a value after it is no
 * option), and the few commands that take none at all.
 */
export const BUILTINS: ReadonlySet<string> = new Set([
  'alias',
  'bg',
  'bind',
  'break',
  'builtin',
  'caller',
  'cd',
  'command',
  'compgen',
  'complete',
  'compopt',
  'continue',
  'declare',
  'dirs',
  'disown',
  'enable',
  'eval',
  'exec',
  'exit',
  'export',
  'fc',
  'fg',
  'getopts',
  'hash',
  'help',
  'history',
  'jobs',
  'kill',
  'let',
  'local',
  'logout',
  'mapfile',
  'popd',
  'printf',
  'pushd',
  'pwd',
  'read',
  'readarray',
  'readonly',
  'return',
  'set',
  'shift',
  'shopt',
  'source',
  '.',
  'suspend',
  'times',
  'trap',
  'type',
  'typeset',
  'ulimit',
  'umask',
  'unalias',
  'unset',
  'wait',
]);

/** Commands whose arguments are never options, or whose options cannot do harm. */
export const NO_OPTIONS: ReadonlySet<string> = new Set(['echo', 'test', '[', ':', 'true', 'false']);

/** Variables whose value bash expands as a prompt, command substitutions included. */
export const CODE_VARIABLES: ReadonlySet<string> = new Set([
  'PS0',
  'PS1',
  'PS2',
  'PS3',
  'PS4',
  'PROMPT_COMMAND',
]);

/** Variables whose value chooses which programs or code run. */
export const PROGRAM_VARIABLES: ReadonlySet<string> = new Set([
  'PATH',
  'BASH_ENV',
  'ENV',
  'SHELL',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'LD_AUDIT',
  'PYTHONPATH',
  'PYTHONSTARTUP',
  'PYTHONHOME',
  'NODE_OPTIONS',
  'NODE_PATH',
  'PERL5OPT',
  'PERL5LIB',
  'PERLLIB',
  'RUBYOPT',
  'RUBYLIB',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_EXTERNAL_DIFF',
  'GIT_PAGER',
  'GIT_EDITOR',
  'GIT_EXEC_PATH',
  'EDITOR',
  'VISUAL',
  'PAGER',
  'BROWSER',
  'SSH_ASKPASS',
  'SUDO_ASKPASS',
  'LESSOPEN',
  'LESSCLOSE',
  'MANPAGER',
  'TAR_OPTIONS',
  'GREP_OPTIONS',
]);

/** The operators of `[[ ]]` whose operands bash evaluates as arithmetic. */
export const ARITH_TESTS: ReadonlySet<string> = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
