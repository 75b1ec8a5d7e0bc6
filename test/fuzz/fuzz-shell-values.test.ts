/**
 * Fuzzing values in shell commands. Every construct of the value-as-code corpus gets generated
 * values built from the fragments attacks use (command substitutions, array indexes, quotes,
 * separators, options, the names of other values' variables), run by real bash: each is refused
 * with UNSAFE_VALUE or runs and creates no marker. And the shell reader itself, fed generated
 * shell text with slots, always answers, in bounded time.
 *
 * `DIRIGENT_FUZZ_RUNS=10000 npx vitest run test/fuzz` runs longer than CI does.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { DirigentError, ErrorCode } from '../../src/errors/index.js';
import { renderShell, ShellVariables } from '../../src/values/shell-render.js';
import { shellSlots } from '../../src/values/shell-slots.js';
import { CONSTRUCTS } from '../support/value-as-code-corpus.js';

const RUNS = Number(process.env.DIRIGENT_FUZZ_RUNS ?? 150);
const dir = mkdtempSync(join(tmpdir(), 'dirigent-fuzz-shell-'));
const marker = join(dir, 'PWNED');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What attacks are made of. */
const FRAGMENTS = [
  'touch PWNED',
  'touch${IFS}PWNED',
  '$(',
  ')',
  '`',
  ';',
  '\n',
  "'",
  '"',
  'a[',
  ']',
  '-',
  '--output=PWNED',
  ' ',
  'x',
  '|',
  '&&',
  '#',
  '\\',
  '${',
  '}',
  '=',
  'DIRIGENT_V1',
  'os.system(',
  'e ',
  '/',
  '0',
];
const value = fc
  .array(fc.constantFrom(...FRAGMENTS), { minLength: 1, maxLength: 8 })
  .map((parts) => parts.join(''));

describe('generated values in the corpus of constructs', () => {
  it('are refused or run nothing, in real bash', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CONSTRUCTS), value, (construct, v) => {
        const texts = `${construct.template}\n: "{y}"`.split(/\{[xy]\}/);
        const vars = new ShellVariables();
        let command: string;
        try {
          command = renderShell(
            { texts, slots: shellSlots(texts) },
            [v, 'a[$(touch PWNED)]'],
            ['{input:x}', '{input:y}'],
            vars,
          );
        } catch (err) {
          expect(err).toBeInstanceOf(DirigentError);
          expect((err as DirigentError).code).toBe(ErrorCode.UNSAFE_VALUE);
          return;
        }
        rmSync(marker, { force: true });
        spawnSync('bash', ['-c', command], {
          cwd: dir,
          env: { PATH: process.env.PATH, HOME: dir, ...vars.values },
          timeout: 10_000,
          input: '',
        });
        expect(existsSync(marker), `${JSON.stringify(v)} ran as code in ${command}`).toBe(false);
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
});

describe('the shell reader', () => {
  /** Shell syntax, and slots. */
  const UNITS = [
    ...'\'"`$(){}[]<>|&;#\\\n\t =-!*?~',
    'if ',
    'then ',
    'fi',
    'for ',
    'do ',
    'done',
    'case ',
    ' in ',
    'esac',
    '<<EOF\n',
    '\nEOF\n',
    '$((',
    '((',
    '[[',
    ']]',
    'eval ',
    'bash -c ',
    'declare -i ',
    'read ',
    'a',
    'x',
    '1',
    '{x}',
  ];
  const text = fc.array(fc.constantFrom(...UNITS), { maxLength: 60 }).map((us) => us.join(''));

  it('answers for any text with slots, within bounds', () => {
    fc.assert(
      fc.property(text, (t) => {
        const texts = t.split('{x}');
        const started = performance.now();
        const slots = shellSlots(texts);
        expect(slots).toHaveLength(texts.length - 1);
        expect(performance.now() - started).toBeLessThan(2000);
      }),
      { numRuns: RUNS * 10 },
    );
  });
});
