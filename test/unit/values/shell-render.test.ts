/**
 * Values written into shell templates stay data: run through real bash, a rendered command prints
 * exactly what the template says with the value in its place, whatever the value holds, and
 * nothing in a value ever runs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/errors/index.js';
import { renderShell, ShellVariables } from '../../../src/values/shell-render.js';
import { shellSlots, type ShellSlot } from '../../../src/values/shell-slots.js';
import { thrown } from '../../support/thrown.js';

const dir = mkdtempSync(join(tmpdir(), 'dirigent-shell-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const marker = join(dir, 'PWNED');

/** Renders `texts` with `values` and runs the command with bash; returns its stdout. */
function bash(texts: string[], values: unknown[]): string {
  const vars = new ShellVariables();
  const labels = values.map((_, i) => `{input:v${i}}`);
  const command = renderShell({ texts, slots: shellSlots(texts) }, values, labels, vars);
  const r = spawnSync('bash', ['-c', command], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: dir, ...vars.values },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`bash failed (${r.status}): ${r.stderr}\n${command}`);
  return r.stdout;
}

const HOSTILE = [
  "x'; touch PWNED; echo 'y",
  'x"; touch PWNED; echo "y',
  '$(touch PWNED)',
  '`touch PWNED`',
  '; touch PWNED',
  '| touch PWNED',
  '&& touch PWNED',
  'a\ntouch PWNED\nb',
  '$HOME ${HOME} $((1+1)) \\ \\\\',
  "'\"'\"'",
  '* ? [a-z] ~ {a,b}',
  'EOF',
  '\t  spaced  \t',
  '-n',
  '',
  'ünïcødé ✓ 日本',
  'x'.repeat(100_000),
];

/** Templates, and what each prints for a value `v`. */
const TEMPLATES: [string[], (v: string) => string][] = [
  [["printf '%s' ", ''], (v) => v],
  [["printf '%s' 'Hello, ", "!'"], (v) => `Hello, ${v}!`],
  [["printf '%s' \"Hello, ", '!"'], (v) => `Hello, ${v}!`],
  [["printf '%s' $'tab\\t", "'"], (v) => `tab\t${v}`],
  [["printf '%s' x", 'y'], (v) => `x${v}y`],
  [['cat <<EOF\n', '\nEOF'], (v) => `${v}\n`],
  [['cat <<-EOF\n\t', '\n\tEOF'], (v) => `${v}\n`],
  [['# comment ', "\nprintf '%s' done"], () => 'done'],
  [["printf '%s' \"$(printf '%s' \"", '")"'], (v) => v.replace(/\n+$/, '')],
  [["printf '%s' \"`printf '%s' '", '\'`"'], (v) => v.replace(/\n+$/, '')],
  [['v=x', 'y; printf \'%s\' "$v"'], (v) => `x${v}y`],
  [["printf '%s' \"${HOME:+", '}"'], (v) => v],
  [["printf '%s' ${HOME:+", '}'], (v) => v],
  [['if [ -n "', "\" ]; then printf '%s' yes; else printf '%s' no; fi"], (v) => (v ? 'yes' : 'no')],
  [['case ', " in *) printf '%s' matched;; esac"], () => 'matched'],
  [["printf '%s' ", ' > out.txt; cat out.txt'], (v) => v],
];

describe('shell templates run through bash', () => {
  it.each(TEMPLATES.map(([texts, expected]) => [texts.join('{v}'), texts, expected] as const))(
    '%s prints every hostile value exactly, running nothing in it',
    (_name, texts, expected) => {
      for (const v of HOSTILE) expect(bash(texts, [v])).toBe(expected(v));
      expect(existsSync(marker)).toBe(false);
    },
  );

  it('prints any generated text exactly in every quoting', () => {
    const value = fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !s.includes('\0'));
    fc.assert(
      fc.property(value, fc.constantFrom(...TEMPLATES), (v, [texts, expected]) => {
        expect(bash(texts, [v])).toBe(expected(v));
      }),
      { numRuns: Number(process.env.DIRIGENT_FUZZ_RUNS ?? 60) },
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('passes a list standing as a word of its own as one word per element', () => {
    const texts = ["printf '<%s>' ", ''];
    expect(bash(texts, [['a b', '$(touch PWNED)', '']])).toBe('<a b><$(touch PWNED)><>');
    expect(bash(["printf '<%s>' x", ''], [['a', 'b']])).toBe('<x["a","b"]>');
    expect(existsSync(marker)).toBe(false);
  });

  it('writes numbers, booleans, null and objects as their text', () => {
    expect(bash(["printf '%s|' ", ' ', ' ', ''], [42, true, null])).toBe('42|true||');
    expect(bash(["printf '%s' '", "'"], [{ a: "it's" }])).toBe('{"a":"it\'s"}');
  });
});

describe('where bash would read a value as code', () => {
  const refuse = (texts: string[], value: string) =>
    thrown(() =>
      renderShell(
        { texts, slots: shellSlots(texts) },
        [value],
        ['{input:x}'],
        new ShellVariables(),
      ),
    );

  it('accepts only integers in arithmetic, and computes with them', () => {
    expect(bash(['echo $(( ', ' + 1 ))'], ['41'])).toBe('42\n');
    expect(bash(['(( ', ' > 1 )) && echo big'], [' 5\n'])).toBe('big\n');
    expect(bash(['let "x = ', ' * 2"; echo $x'], ['21'])).toBe('42\n');
    expect(bash(['[[ ', ' -eq 3 ]] && echo three'], ['3'])).toBe('three\n');
    for (const texts of [
      ['echo $(( ', ' + 1 ))'],
      ['(( ', ' ))'],
      ['let x=', ''],
      ['[[ ', ' -gt 1 ]]'],
      ['[[ 1 -lt ', ' ]]'],
      ['a[', ']=1'],
      ['echo ${a[', ']}'],
    ]) {
      const err = refuse(texts, 'a[$(touch PWNED)]');
      expect(err.code).toBe(ErrorCode.UNSAFE_VALUE);
      expect(err.message).toContain('{input:x}');
      expect(err.message).toContain('not an integer');
    }
  });

  it('compares text in [[ ]] without arithmetic', () => {
    expect(bash(['[[ ', ' == "a b" ]] && echo same'], ['a b'])).toBe('same\n');
  });

  it('accepts only plain words where eval, sh -c, ssh or watch parse the text again', () => {
    expect(bash(['eval "echo ', '"'], ['hello world'])).toBe('hello world\n');
    expect(bash(["bash -c 'echo ", "'"], ['a/b.c'])).toBe('a/b.c\n');
    for (const texts of [
      ['eval "echo ', '"'],
      ['eval echo ', ''],
      ["bash -c 'echo ", "'"],
      ['sh -ec "echo ', '"'],
      ["sudo sh -c 'echo ", "'"],
      ['ssh host ls ', ''],
      ["find . -exec sh -c 'echo ", "' \\;"],
    ]) {
      const err = refuse(texts, '$(touch PWNED)');
      expect(err.code).toBe(ErrorCode.UNSAFE_VALUE);
      expect(err.hint).toContain('sh -c \'echo "$1"\' _ {input:x}');
    }
  });

  it('leaves the arguments after an sh -c script as data', () => {
    expect(bash(['bash -c \'printf %s "$1"\' _ ', ''], ['$(touch PWNED); x'])).toBe(
      '$(touch PWNED); x',
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('writes a value as it is into a here-document with a quoted delimiter, one line at most', () => {
    expect(bash(["cat <<'EOF'\nx ", ' $HOME\nEOF'], ['$(id) `id`'])).toBe('x $(id) `id` $HOME\n');
    expect(refuse(["cat <<'EOF'\n", '\nEOF'], 'a\nEOF\ntouch PWNED').code).toBe(
      ErrorCode.UNSAFE_VALUE,
    );
    expect(refuse(['cat <<"END"\n', '\nEND'], 'END').code).toBe(ErrorCode.UNSAFE_VALUE);
  });

  it('refuses NUL bytes, which no shell variable can hold', () => {
    const err = refuse(["echo '", "'"], 'a\0b');
    expect(err.code).toBe(ErrorCode.UNSAFE_VALUE);
    expect(err.message).toContain('NUL');
  });

  it('refuses values too large for a command environment with INPUT_TOO_LARGE', () => {
    const err = refuse(['echo ', ''], 'x'.repeat(200_000));
    expect(err.code).toBe(ErrorCode.INPUT_TOO_LARGE);
    expect(err.hint).toContain('file');
  });
});

describe('the scanner', () => {
  const slot = (texts: string[], index = 0): ShellSlot => shellSlots(texts)[index]!;

  it('tells the quoting each slot stands in', () => {
    expect(slot(['echo ', '']).quoting).toBe('none');
    expect(slot(["echo '", "'"]).quoting).toBe('single');
    expect(slot(['echo "', '"']).quoting).toBe('double');
    expect(slot(["echo $'", "'"]).quoting).toBe('ansi');
    expect(slot(['cat <<E\n', '\nE']).quoting).toBe('heredoc');
    expect(slot(["cat <<'E'\n", '\nE'])).toMatchObject({
      quoting: 'heredoc-quoted',
      delimiter: 'E',
    });
    expect(slot(['cat <<E\nE\necho ', '']).quoting).toBe('none');
    expect(slot(['# ', '']).quoting).toBe('comment');
    expect(slot(['echo a # ', '\necho ', ''], 1).quoting).toBe('none');
    expect(slot(['echo "$(echo \'', '\')"']).quoting).toBe('single');
    expect(slot(["echo \\'", '']).quoting).toBe('none');
  });

  const shapes = (texts: string[], index = 0) => slot(texts, index).needs.map((n) => n.shape);

  it('tells a program chosen by a value from its arguments', () => {
    expect(shapes(['', ' --help'])).toContain('nothing');
    expect(shapes(['ls; ', ' -l'])).toContain('nothing');
    expect(shapes(['X=1 "', '" a'])).toContain('nothing');
    expect(shapes(['sudo -u root ', ' a'])).toContain('nothing');
    expect(shapes(['ls -- ', ''])).toEqual([]);
    expect(shapes(['X=', ' ls'])).toEqual([]);
    expect(shapes(['> ', ' ls'])).toEqual([]);
  });

  it('tells whole words from parts of words', () => {
    expect(slot(['ls ', ' -l']).wholeWord).toBe(true);
    expect(slot(['ls ', ';']).wholeWord).toBe(true);
    expect(slot(['ls a', '']).wholeWord).toBe(false);
    expect(slot(['ls ', 'b']).wholeWord).toBe(false);
    expect(slot(['ls "', '"']).wholeWord).toBe(false);
  });

  it('names the construct that reads a slot again', () => {
    const construct = (texts: string[]) =>
      slot(texts).needs.find((n) => n.shape === 'shell-words')?.construct;
    expect(construct(['eval ', ''])).toBe('text `eval` runs');
    expect(construct(["bash -lc '", "'"])).toBe('the script of `bash -c`');
    expect(construct(["bash -c 'x' ", ''])).toBeUndefined();
    expect(construct(['eval x; echo ', ''])).toBeUndefined();
    expect(shapes(['grep -c ', ' f'])).toEqual(['not-option']);
  });
});
