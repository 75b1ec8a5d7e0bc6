/**
 * `dirigent tool test`: worked examples run as tests, in a real process. The suite runs
 * `tool test --all` over the repository: every built-in, RYE's names of them, and the project's
 * JS/TS tools that declare examples (examples/slugify).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from '../../src/tools/builtin/index.js';
import { RYE_ALIAS_TOOLS } from '../../src/tools/rye-alias-tools.js';
import { CLI_MAIN, REPO_ROOT } from '../support/paths.js';

let project: string;
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-tool-test-'));
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

function toolTest(dir: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [CLI_MAIN, 'tool', 'test', ...args, '--project', dir], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A JS tool of the project whose second example expects the wrong result. */
const SHOUT = `export const description = 'Shouts.';
export const input_schema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
export const examples = [
  { input: { text: 'hi' }, output: { loud: 'HI!' }, description: 'shouts' },
  { input: { text: 'ok' }, output: { loud: 'ok' }, description: 'a wrong expectation' },
];
export function execute(input) { return { loud: input.text.toUpperCase() + '!' }; }
`;

describe('dirigent tool test', () => {
  it('--all over the repository: every example of every built-in and project tool passes', () => {
    const r = toolTest(REPO_ROOT, '--all', '--json');
    expect(r.stderr).toBe('');
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      tools: { itemId: string; from: string }[];
      outcomes: { itemId: string; passed: boolean; difference?: string }[];
    };
    expect(report.outcomes.filter((o) => !o.passed)).toEqual([]);
    expect(r.code).toBe(0);
    const ids = report.tools.map((t) => t.itemId);
    for (const t of [...BUILTIN_TOOLS, ...RYE_ALIAS_TOOLS]) expect(ids).toContain(t.itemId);
    expect(report.tools).toContainEqual({
      itemId: 'examples/slugify',
      from: 'project',
      examples: 1,
    });
  });

  it('reports each example, and the difference of one that fails (exit 1)', () => {
    mkdirSync(join(project, '.ai', 'tools', 'text'), { recursive: true });
    writeFileSync(join(project, '.ai', 'tools', 'text', 'shout.mjs'), SHOUT);
    const r = toolTest(project, 'text/shout');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('text/shout (project)');
    expect(r.stdout).toMatch(/✓ shouts \(\d+ ms\)/);
    expect(r.stdout).toMatch(
      /✗ a wrong expectation \(\d+ ms\)\n\s+at \/loud: expected "ok", got "OK!"/,
    );
    expect(r.stdout).toContain('2 examples of 1 tools: 1 passed, 1 failed');
  });

  it('one built-in by name', () => {
    const r = toolTest(project, 'dirigent/fs/grep');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('3 examples of 1 tools: 3 passed, 0 failed');
  });

  it('exits 2 for an unknown tool, a tool without examples, and neither a name nor --all', () => {
    expect(toolTest(project, 'no/such/tool')).toMatchObject({ code: 2 });
    mkdirSync(join(project, '.ai', 'tools'), { recursive: true });
    writeFileSync(
      join(project, '.ai', 'tools', 'plain.mjs'),
      "export const description = 'Does nothing.';\nexport function execute() { return {}; }\n",
    );
    const none = toolTest(project, 'plain', '--json');
    expect(none.code).toBe(2);
    expect(JSON.parse(none.stdout)).toMatchObject({ ok: false, error: { code: 'NO_EXAMPLES' } });
    expect(toolTest(project).code).toBe(2);
  });
});
