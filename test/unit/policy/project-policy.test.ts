/**
 * A project's policy: what `{env:…}` may read, strict mode and size limits, from
 * `.ai/config/dirigent.yaml` and the environment; and what validation reports under it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseDirective } from '../../../src/directive/parse-directive.js';
import { DEFAULT_CHECKS } from '../../../src/directive/validate-directive.js';
import { DirectiveLoader } from '../../../src/engine/directive-loader.js';
import { validateInputs } from '../../../src/engine/validate-inputs.js';
import { ErrorCode } from '../../../src/errors/index.js';
import { checkJsonSize } from '../../../src/policy/check-json-size.js';
import {
  DEFAULT_LIMITS,
  loadProjectPolicy,
  parsePolicy,
} from '../../../src/policy/project-policy.js';
import { thrown } from '../../support/thrown.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function projectWith(config: string | undefined): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-policy-'));
  dirs.push(dir);
  if (config !== undefined) {
    mkdirSync(join(dir, '.ai', 'config'), { recursive: true });
    writeFileSync(join(dir, '.ai', 'config', 'dirigent.yaml'), config);
  }
  return dir;
}

const FENCE = '```';
const directive = (process: string, extra = '') =>
  `# T\n\n${FENCE}xml\n<directive name="t" version="1.0.0">${extra}<inputs><input name="x" type="string">x</input></inputs><process>${process}</process></directive>\n${FENCE}\n`;
const bash = (command: string) =>
  `<step name="s"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="${command}"/></execute></step>`;

describe('the project policy', () => {
  it("defaults to RYE's folder variables only, not strict, with the documented limits", () => {
    const policy = loadProjectPolicy(projectWith(undefined), {});
    expect([...policy.envAllow].sort()).toEqual(['AI_DIR', 'USER_SPACE']);
    expect(policy.strict).toBe(false);
    expect(policy.limits).toEqual({
      directiveBytes: 1048576,
      inputsBytes: 1048576,
      payloadBytes: 1048576,
      resultBytes: 8388608,
      jsonDepth: 64,
    });
  });

  it('reads env_allow, strict and limits from .ai/config/dirigent.yaml; the environment adds to them', () => {
    const dir = projectWith(
      'env_allow: [REGION, STAGE]\nstrict: false\nlimits:\n  inputs_bytes: 2048\n',
    );
    const policy = loadProjectPolicy(dir, {
      DIRIGENT_ENV_ALLOW: 'TEAM, OWNER',
      DIRIGENT_STRICT: '1',
    });
    expect([...policy.envAllow].sort()).toEqual([
      'AI_DIR',
      'OWNER',
      'REGION',
      'STAGE',
      'TEAM',
      'USER_SPACE',
    ]);
    expect(policy.strict).toBe(true);
    expect(policy.limits).toEqual({ ...DEFAULT_LIMITS, inputsBytes: 2048 });
  });

  it.each([
    ['stict: true\n', 'unknown setting "stict"', 1],
    ['strict: yes please\n', '"strict" must be true or false', 1],
    ['env_allow: [A, "not a name"]\n', 'list of environment variable names', 1],
    ['limits:\n  inputs_bytes: -1\n', 'positive whole number', 2],
    ['limits:\n  input_bytes: 10\n', 'no setting "input_bytes"', 2],
    ['env_allow: [A\n', '', 1],
  ])('refuses %j with INVALID_CONFIG at its line', (text, says, line) => {
    const err = thrown(() => parsePolicy(text, 'dirigent.yaml'));
    expect(err.code).toBe(ErrorCode.INVALID_CONFIG);
    expect(err.message).toContain(says);
    expect(err.location?.line).toBeGreaterThanOrEqual(line);
    expect(err.hint).toBeTruthy();
  });

  it('refuses a DIRIGENT_ENV_ALLOW that names no variable', () => {
    const err = thrown(() =>
      loadProjectPolicy(projectWith(undefined), { DIRIGENT_ENV_ALLOW: 'A,$B' }),
    );
    expect(err.code).toBe(ErrorCode.INVALID_CONFIG);
  });
});

describe('{env:…} under the policy', () => {
  it('reads an allowed variable, and a declared secret, and refuses the rest', () => {
    const loader = new DirectiveLoader(projectWith('env_allow: [REGION]\n'), false);
    const ok = loader.fromText(
      't.md',
      directive(
        '<step name="s"><render>{env:REGION} {env:TOKEN} ${env.USER_SPACE}</render></step>',
        '<metadata><secrets><secret name="TOKEN"/></secrets></metadata>',
      ),
    );
    expect(ok.compiled.directive.secrets).toEqual(['TOKEN']);
    const err = thrown(() =>
      loader.fromText('t.md', directive('<step name="s"><render>${env.HOME}</render></step>')),
    );
    expect(err.code).toBe(ErrorCode.ENV_NOT_ALLOWED);
    expect(err.hint).toContain('env_allow: [HOME]');
    expect(err.hint).toContain('DIRIGENT_ENV_ALLOW=HOME');
  });
});

describe('values that become code', () => {
  const warnings = (process: string) =>
    parseDirective(directive(process), 't.md').warnings.filter(
      (w) => w.code === ErrorCode.VALUE_AS_CODE,
    );

  it('are not reported where values are data: quoted or not, in a pipeline, as arguments of sh -c', () => {
    expect(
      warnings(
        bash(
          `echo '{input:x}' | tr a b; grep -- {input:x} f; sh -c 'echo &quot;$1&quot;' _ {input:x}`,
        ),
      ),
    ).toEqual([]);
  });

  it('name a command that is one value, a program chosen by a value, and a value that sh -c reparses', () => {
    const found = warnings(
      bash('{input:x}') +
        bash('{input:x} --help').replace('"s"', '"t"') +
        bash(`sh -c 'ls {input:x}'`).replace('"s"', '"u"'),
    );
    expect(found.map((w) => w.message)).toEqual([
      expect.stringContaining('is {input:x} and nothing else'),
      expect.stringContaining('stands in the name of the program a command runs'),
      expect.stringContaining('stands in the script of `sh -c`'),
      expect.stringContaining('stands in an argument of `ls` where an option may stand'),
    ]);
    expect(found[2]!.hint).toContain(`sh -c 'echo "$1"' _ {input:x}`);
    expect(found[3]!.hint).toContain('ls … -- {input:x}');
    expect(found.every((w) => w.loc?.line !== undefined)).toBe(true);
  });

  it("are errors when the project is strict, RYE's whole-command form included", () => {
    const text = directive(
      `<step name="s"><execute item_type="tool" item_id="rye/bash/bash"><param name="command" value="{input:x}"/></execute></step>`,
    );
    expect(parseDirective(text, 't.md').warnings.map((w) => w.code)).toContain(
      ErrorCode.VALUE_AS_CODE,
    );
    const err = thrown(() =>
      parseDirective(text, 't.md', { checks: { ...DEFAULT_CHECKS, strict: true } }),
    );
    expect(err.code).toBe(ErrorCode.VALUE_AS_CODE);
    expect(err.message).toContain('strict mode');
  });

  it('include a tool chosen by a value, and a URL host chosen by a value', () => {
    const found = parseDirective(
      directive(
        '<step name="s"><execute item_type="tool" item_id="tools/{input:x}"/></step>' +
          '<step name="t"><execute item_type="tool" item_id="api/get"><param name="url" value="https://{input:x}/v1"/></execute></step>',
      ),
      't.md',
      {
        checks: {
          ...DEFAULT_CHECKS,
          syntaxOf: (id, p) => (id === 'api/get' && p === 'url' ? 'url' : undefined),
        },
      },
    ).warnings.filter((w) => w.code === ErrorCode.VALUE_AS_CODE);
    expect(found.map((w) => w.message)).toEqual([
      expect.stringContaining('chosen by a value'),
      expect.stringContaining('stands in the host of the URL'),
    ]);
  });
});

describe('limits on what comes in', () => {
  const d = parseDirective(directive('<step name="s"><render>hi</render></step>'), 't.md');

  it('refuses inputs larger than inputs_bytes with INPUT_TOO_LARGE, naming the setting', () => {
    const err = thrown(() =>
      validateInputs(d, { x: 'y'.repeat(2000) }, { inputsBytes: 1000, jsonDepth: 64 }),
    );
    expect(err.code).toBe(ErrorCode.INPUT_TOO_LARGE);
    expect(err.hint).toContain('limits.inputs_bytes');
    expect(validateInputs(d, { x: 'y'.repeat(500) }, { inputsBytes: 1000, jsonDepth: 64 })).toEqual(
      { x: 'y'.repeat(500) },
    );
  });

  it('measures nesting without recursion: 100,000 levels fail fast instead of overflowing the stack', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const err = thrown(() =>
      checkJsonSize(
        deep,
        { maxBytes: 1e9, maxDepth: 64 },
        { what: 'The payload', code: ErrorCode.INPUT_TOO_LARGE, setting: 'limits.json_depth' },
      ),
    );
    expect(err.message).toContain('deeper than 64 levels');
  });

  it('counts bytes as UTF-8', () => {
    const subject = {
      what: 'The result',
      code: ErrorCode.RESULT_TOO_LARGE,
      setting: 'limits.result_bytes',
    };
    expect(() => checkJsonSize('é'.repeat(40), { maxBytes: 80, maxDepth: 4 }, subject)).toThrow(
      /larger than 80 bytes/,
    );
    expect(() =>
      checkJsonSize('e'.repeat(40), { maxBytes: 80, maxDepth: 4 }, subject),
    ).not.toThrow();
  });
});
