/**
 * Constructs where bash, or a program it starts, reads text again, and values that try to run
 * code through them: each tries to create the file `PWNED` in the working directory. The property
 * every row must keep, for every value: the command is refused (`UNSAFE_VALUE`) or it runs and
 * creates no marker. `{x}` in a construct stands for the value's slot.
 */

/** A construct, and whether a plain value (`hello`) must run there (its output). */
export interface Construct {
  template: string;
  /** What the construct prints for the value `hello`, when `hello` must be accepted there. */
  hello?: string;
  /** The value is a list (it stands as a word of its own: one word per element). */
  list?: boolean;
}

export const CONSTRUCTS: readonly Construct[] = [
  // The rows of the issue that found the holes.
  { template: 'for ((i=0;i<{x};i++)); do :; done' },
  { template: 'declare -i n={x}' },
  { template: 'n="{x}"; if [[ $n -gt 5 ]]; then :; fi' },
  { template: 'n="{x}"; echo $((n))' },
  { template: "command eval 'echo {x}'", hello: 'hello\n' },
  { template: 'builtin eval "echo {x}"', hello: 'hello\n' },
  { template: "trap 'echo {x}' EXIT", hello: 'hello\n' },
  { template: 'bash <<< {x}' },
  { template: 'echo {x} | sh' },
  { template: 'bash <<EOF\n{x}\nEOF' },
  { template: "bash <<'EOF'\n{x}\nEOF" },
  { template: 'source <(echo {x})' },
  { template: `python3 -c "print('{x}')"`, hello: 'hello\n' },
  { template: 'git log -1 {x} > /dev/null' },
  { template: 'tar cf /dev/null {x}', list: true },
  // The eval family under other prefixes, and shells reading text.
  { template: "exec bash -c 'echo {x}'", hello: 'hello\n' },
  { template: 'env sh -c "echo {x}"', hello: 'hello\n' },
  { template: 'nice -n 1 sh -c "echo {x}"', hello: 'hello\n' },
  { template: 'timeout 5 bash -c "echo {x}"', hello: 'hello\n' },
  { template: 'echo a | xargs -I{} sh -c "echo {x} {}"' },
  { template: 'eval {x}' },
  { template: 'bash -c {x}' },
  { template: 'v={x}; eval "$v"' },
  { template: 'bash -c "$(echo {x})"' },
  { template: 'sh -c \'eval "$1"\' _ {x}' },
  { template: "printf '%s\\n' {x} | bash" },
  { template: 'bash -s <<< "echo {x}"', hello: 'hello\n' },
  { template: 'cat <<EOF | sh\necho {x}\nEOF' },
  { template: 'python3 - <<EOF\nprint("{x}")\nEOF', hello: 'hello\n' },
  { template: 'compgen -W "{x}" h', hello: 'hello\n' },
  { template: 'shopt -s expand_aliases\nalias a="echo {x}"\na', hello: 'hello\n' },
  { template: 'v={x}; echo "${v@P}"', hello: 'hello\n' },
  { template: 'PS4={x}; set -x; true' },
  { template: 'PATH={x} ls' },
  // Arithmetic, directly and through variables, reads, pipes and function arguments.
  { template: 'let "y={x}"' },
  { template: '(( {x} ))' },
  { template: 'echo $[{x}]' },
  { template: 'a=(); a[{x}]=1' },
  { template: 's=abc; echo ${s:{x}}' },
  { template: 'echo hi >&{x}' },
  { template: 'f() { (( $1 > 3 )); }; f {x}' },
  { template: 'echo {x} | while read n; do (( n )); done' },
  { template: "export n={x}; bash -c '(( n ))'" },
  { template: 'n=$(echo {x}); (( n ))' },
  { template: 'read n <<< "{x}"; (( n ))' },
  { template: 'mapfile -t a <<< "{x}"; (( a[0] ))' },
  { template: 'printf -v n "%s" "{x}"; (( n ))' },
  { template: 'set -- {x}; (( $1 ))' },
  { template: 'arr=({x}); (( arr[0] ))' },
  { template: 'declare -i m; m={x}' },
  // Variable names.
  { template: "printf -v {x} '%s' 1" },
  { template: 'read {x} <<< 1' },
  { template: 'declare -n r={x}; echo "$r"' },
  { template: 'x={x}; echo "${!x}"' },
  { template: '[[ -v {x} ]]' },
  { template: '[ -v {x} ]' },
  { template: 'declare "{x}=1"' },
  // Other languages' program text.
  { template: `awk 'BEGIN { print "{x}" }'`, hello: 'hello\n' },
  { template: "sed 's/a/{x}/' <<< a", hello: 'hello\n' },
  { template: `perl -e 'print "{x}\\n"'`, hello: 'hello\n' },
  { template: `node -e 'console.log("{x}")'`, hello: 'hello\n' },
  // Options.
  { template: 'ls {x} > /dev/null', hello: '' },
  { template: 'cat "{x}.txt" 2> /dev/null; true', hello: '' },
  { template: 'find . -maxdepth 0 -name {x}', list: true },
  { template: 'd={x}; ls $d > /dev/null 2>&1; true' },
  // Data: any value runs there, printed exactly.
  { template: "echo 'Hello, {x}!'", hello: 'Hello, hello!\n' },
  { template: 'printf "%s\\n" {x}', hello: 'hello\n' },
  { template: 'grep -c -- {x} /dev/null; true', hello: '0\n' },
  { template: 'case {x} in *) echo matched;; esac', hello: 'matched\n' },
  { template: 'echo "$(echo {x})"', hello: 'hello\n' },
  { template: 'sh -c \'echo "$1"\' _ {x}', hello: 'hello\n' },
  { template: "cat <<'EOF'\n{x}\nEOF", hello: 'hello\n' },
];

/** Values that try to run `touch PWNED` in every way the constructs above could let them. */
export const HOSTILE: readonly unknown[] = [
  'a[$(touch PWNED)]',
  'x[`touch PWNED`]',
  'a;touch PWNED',
  'touch PWNED',
  '$(touch PWNED)',
  '`touch PWNED`',
  'a\ntouch PWNED',
  "x'; touch PWNED; echo '",
  'x"; touch PWNED; echo "',
  "');import os;os.system('touch PWNED');print('",
  '");require("fs").writeFileSync("PWNED","");("',
  '"; system("touch PWNED"); "',
  'b/;e touch PWNED;#',
  '--output=PWNED',
  '--checkpoint-action=exec=touch PWNED',
  'DIRIGENT_V1',
  '-exec',
  ['--checkpoint=1', '--checkpoint-action=exec=touch PWNED', 'd'],
  ['-exec', 'touch', 'PWNED', ';'],
];
