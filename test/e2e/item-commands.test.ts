/**
 * `dirigent search`, `dirigent load` and `dirigent execute` in a real process: the lines people
 * read, `--json` for scripts, and the exit statuses (0 done, 1 a tool or run that failed, 2 a
 * wrong call, 3 a directive waiting for an answer).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeDirective } from '../support/directive-file.js';
import { CLI_MAIN } from '../support/paths.js';

let project: string;
let home: string;

const write = (file: string, text: string) => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
};

beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-items-cli-'));
  home = mkdtempSync(join(tmpdir(), 'dirigent-items-cli-home-'));
  write(
    join(project, '.ai', 'knowledge', 'ops', 'releases.md'),
    '---\nname: releases\ntitle: Shipping releases\ndescription: When releases reach production\ncategory: ops\ntags: [deploy]\nversion: "2.1.0"\n---\n\nReleases ship on Tuesdays.\n',
  );
  mkdirSync(join(project, '.ai', 'directives'), { recursive: true });
  writeDirective(
    join(project, '.ai', 'directives'),
    'approve',
    `<inputs><input name="change" type="string" required="true">what ships</input></inputs>
    <process><step name="ask"><instruction>Ship {input:change}?</instruction></step>
    <step name="say"><render>answer: \${steps.ask.result}</render></step></process>
    <outputs><output name="said" expr="steps.say.result"/></outputs>`,
  );
});
afterEach(() => {
  rmSync(project, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI_MAIN, ...args, '--project', project], {
    encoding: 'utf8',
    env: { ...process.env, DIRIGENT_USER_SPACE: join(home, '.ai'), REDIS_URL: '' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('dirigent search', () => {
  it('prints one line per item, best first, and the page', () => {
    const r = cli('search', 'relases', 'OR', 'sleep', '--limit', '1');
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^(knowledge|tool)\s+(project|system)\s+\S+/);
    expect(lines[1]).toBe('1–1 of 2 (next page: --offset 1)');
    const nothing = cli('search', 'zzzqqq');
    expect(nothing).toMatchObject({ code: 0, stdout: 'Nothing matches "zzzqqq".\n' });
  });

  it('filters and answers as JSON', () => {
    const r = cli('search', '--kind', 'knowledge', '--tag', 'deploy', '--version', '>=2', '--json');
    expect(r.code, r.stderr).toBe(0);
    const page = JSON.parse(r.stdout);
    expect(page).toMatchObject({ total: 1, offset: 0, limit: 10, query: '' });
    expect(page.results[0]).toMatchObject({
      itemId: 'ops/releases',
      kind: 'knowledge',
      space: 'project',
      title: 'Shipping releases',
      signature: 'unsigned',
      shadowed: false,
    });
  });

  it('exits 2 with a hint for a malformed query or option', () => {
    const bad = cli('search', '"unclosed');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('INVALID_QUERY');
    expect(cli('search', 'x', '--kind', 'widget').code).toBe(2);
    expect(cli('search', 'x', '--limit', 'many').code).toBe(2);
  });
});

describe('dirigent load', () => {
  it('prints an item, and copies a system tool into the project to shadow it', () => {
    const shown = cli('load', 'knowledge', 'ops/releases');
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('Releases ship on Tuesdays.');

    const itemId = 'rye/core/runtimes/bash/bash';
    const copied = cli('load', 'tool', itemId, '--to', 'project');
    expect(copied.code, copied.stderr).toBe(0);
    expect(copied.stdout).toMatch(/^Copied tool rye\/core\/runtimes\/bash\/bash from the system/);
    expect(
      existsSync(join(project, '.ai', 'tools', 'rye', 'core', 'runtimes', 'bash', 'bash.yaml')),
    ).toBe(true);
    const search = JSON.parse(cli('search', `id:"${itemId}"`, '--kind', 'tool', '--json').stdout);
    expect(
      search.results.map((r: { space: string; shadowed: boolean }) => [r.space, r.shadowed]),
    ).toEqual([
      ['project', false],
      ['system', true],
    ]);
  });

  it('refuses the system space as a destination and an unknown item (exit 2)', () => {
    const system = cli('load', 'knowledge', 'ops/releases', '--to', 'system');
    expect(system.code).toBe(2);
    expect(system.stderr).toContain('--to project');
    const unknown = cli('load', 'knowledge', 'ops/nope');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('UNKNOWN_KNOWLEDGE');
  });
});

describe('dirigent execute', () => {
  it('reads knowledge, runs a tool, and says 1 when the tool fails', () => {
    const knowledge = cli('execute', 'knowledge', 'ops/releases');
    expect(knowledge).toMatchObject({ code: 0, stdout: 'Releases ship on Tuesdays.\n' });
    const ran = cli('execute', 'tool', 'dirigent/util/echo', '--params', '{"message": "hi"}');
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ message: 'hi' });
    const failed = cli(
      'execute',
      'tool',
      'dirigent/shell/bash',
      '--params',
      '{"command": "exit 3"}',
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('COMMAND_FAILED');
    const invalid = cli('execute', 'tool', 'dirigent/util/sleep', '--params', '{"ms": "soon"}');
    expect(invalid.code).toBe(2);
  });

  it('runs a directive to its instruction (exit 3), and --run-id with --answer completes it', () => {
    const waiting = cli(
      'execute',
      'directive',
      'approve',
      '--params',
      '{"change": "v2"}',
      '--json',
    );
    expect(waiting.code, waiting.stderr).toBe(3);
    const record = JSON.parse(waiting.stdout);
    expect(record.status).toBe('waiting');
    const done = cli(
      'execute',
      'directive',
      'approve',
      '--run-id',
      record.runId,
      '--answer',
      '"yes"',
      '--json',
    );
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({
      status: 'completed',
      outputs: { said: 'answer: yes' },
    });
    const dry = cli('execute', 'directive', 'approve', '--dry-run');
    expect(dry.code).toBe(2);
    expect(dry.stderr).toContain('change');
    const checked = cli(
      'execute',
      'directive',
      'approve',
      '--dry-run',
      '--params',
      '{"change":"x"}',
    );
    expect(checked).toMatchObject({ code: 0 });
    expect(checked.stdout).toContain('Valid');
    expect(readFileSync(join(project, '.ai', 'directives', 'approve.md'), 'utf8')).toContain(
      'instruction',
    );
  });
});
