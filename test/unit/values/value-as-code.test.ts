/**
 * No value becomes code: every construct of the corpus (where bash, or a program it starts, reads
 * text again) with every hostile value is refused with UNSAFE_VALUE before it runs, or runs in
 * real bash and creates no marker file. A plain value still runs where it is data.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirigentError, ErrorCode } from '../../../src/errors/index.js';
import { renderShell, ShellVariables } from '../../../src/values/shell-render.js';
import { shellSlots } from '../../../src/values/shell-slots.js';
import { CONSTRUCTS, HOSTILE, type Construct } from '../../support/value-as-code-corpus.js';

const dir = mkdtempSync(join(tmpdir(), 'dirigent-value-as-code-'));
const marker = join(dir, 'PWNED');
/** A second value of the same command, which a hostile first value may try to reach by name. */
const OTHER = 'a[$(touch PWNED)]';

beforeAll(() => {
  // A repository, so that `git log` gets as far as reading its options.
  const git = (...args: string[]) => spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
  git('init', '-q');
  writeFileSync(join(dir, 'f'), 'a\n');
  git('add', 'f');
  git('-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-qm', 'one');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Renders `construct` with `value` (and a second value {@link OTHER}), or the refusal. */
function render(
  construct: Construct,
  value: unknown,
): { command: string; vars: ShellVariables } | DirigentError {
  const texts = `${construct.template}\n: "{y}"`.split(/\{[xy]\}/);
  const vars = new ShellVariables();
  try {
    const command = renderShell(
      { texts, slots: shellSlots(texts) },
      [value, OTHER],
      ['{input:x}', '{input:y}'],
      vars,
    );
    return { command, vars };
  } catch (err) {
    if (err instanceof DirigentError) return err;
    throw err;
  }
}

function run(command: string, vars: ShellVariables): { status: number | null; stdout: string } {
  rmSync(marker, { force: true });
  const r = spawnSync('bash', ['-c', command], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: dir, ...vars.values },
    encoding: 'utf8',
    timeout: 10_000,
    input: '',
  });
  return { status: r.status, stdout: r.stdout };
}

describe('the corpus of constructs that read text again', () => {
  it.each(CONSTRUCTS.map((c) => [c.template, c] as const))(
    '%s: every hostile value is refused or runs nothing',
    (_name, construct) => {
      for (const value of HOSTILE) {
        if (Array.isArray(value) && construct.list !== true) continue;
        const rendered = render(construct, value);
        if (rendered instanceof DirigentError) {
          expect(rendered.code, String(value)).toBe(ErrorCode.UNSAFE_VALUE);
          expect(rendered.message).toContain('{input:x}');
          expect(rendered.hint).toBeTruthy();
          continue;
        }
        run(rendered.command, rendered.vars);
        expect(
          existsSync(marker),
          `${JSON.stringify(value)} ran as code in ${rendered.command}`,
        ).toBe(false);
      }
    },
  );

  it.each(CONSTRUCTS.filter((c) => c.hello !== undefined).map((c) => [c.template, c] as const))(
    '%s: a plain value runs there',
    (_name, construct) => {
      const rendered = render(construct, construct.list === true ? ['hello'] : 'hello');
      if (rendered instanceof DirigentError) throw rendered;
      expect(run(rendered.command, rendered.vars).stdout).toBe(construct.hello);
    },
  );
});

describe('the constructs the issue found open', () => {
  // Each row: the construct, and the value that ran as code before.
  const ROWS: [string, unknown][] = [
    ['for ((i=0;i<{x};i++)); do :; done', 'a[$(touch PWNED)]'],
    ['declare -i n={x}', 'a[$(touch PWNED)]'],
    ['n="{x}"; if [[ $n -gt 5 ]]; then :; fi', 'a[$(touch PWNED)]'],
    ['n="{x}"; echo $((n))', 'a[$(touch PWNED)]'],
    ["command eval 'echo {x}'", 'a;touch PWNED'],
    ['builtin eval "echo {x}"', 'a;touch PWNED'],
    ["trap 'echo {x}' EXIT", 'a;touch PWNED'],
    ['bash <<< {x}', 'touch PWNED'],
    ['echo {x} | sh', 'touch PWNED'],
    ['bash <<EOF\n{x}\nEOF', 'touch PWNED'],
    ["bash <<'EOF'\n{x}\nEOF", 'touch PWNED'],
    ['source <(echo {x})', 'touch PWNED'],
    [`python3 -c "print('{x}')"`, "');import os;os.system('touch PWNED');print('"],
    ['git log -1 {x}', '--output=PWNED'],
    ['tar cf /dev/null {x}', ['--checkpoint=1', '--checkpoint-action=exec=touch PWNED', 'd']],
  ];

  it.each(ROWS)('%s refuses %j with UNSAFE_VALUE, naming the construct', (template, value) => {
    const rendered = render({ template }, value);
    expect(rendered).toBeInstanceOf(DirigentError);
    const err = rendered as DirigentError;
    expect(err.code).toBe(ErrorCode.UNSAFE_VALUE);
    expect(err.message).toMatch(/\{input:x\} stands in .+; .+; the command was not run\./);
    expect(err.details).toMatchObject({ construct: expect.any(String), shape: expect.any(String) });
  });
});
