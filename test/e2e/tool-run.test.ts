/** `dirigent tool run`: one tool, run directly, in a real process. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_MAIN } from '../support/paths.js';

let project: string;
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-tool-'));
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

function tool(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI_MAIN, 'tool', 'run', ...args, '--project', project], {
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('dirigent tool run', () => {
  it('runs a tool with its params and prints the result (params coerced to the schema)', () => {
    const r = tool(
      'dirigent/fs/write',
      '--params',
      '{"file_path": "notes/a.txt", "content": "hi"}',
      '--json',
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, result: { bytes: 2 } });
    expect(readFileSync(join(project, 'notes', 'a.txt'), 'utf8')).toBe('hi');
    const sleep = tool('dirigent/util/sleep', '--params', '{"ms": "5"}');
    expect(JSON.parse(sleep.stdout)).toEqual({ slept: 5 });
  });

  it('reads params from a file with @', () => {
    writeFileSync(join(project, 'p.json'), '{"command": "echo from-file"}');
    const r = tool('dirigent/shell/bash', '--params', `@${join(project, 'p.json')}`);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ stdout: 'from-file\n', exit_code: 0 });
  });

  it('exits 1 with the error when the tool fails', () => {
    const r = tool('dirigent/shell/bash', '--params', '{"command": "exit 4"}', '--json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: false,
      error: { code: 'COMMAND_FAILED', retryable: true },
    });
  });

  it('exits 2 for an unknown tool, invalid params, or params that are not JSON', () => {
    const unknown = tool('dirigent/util/ecoh');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Did you mean "dirigent/util/echo"?');
    const invalid = tool('dirigent/util/sleep', '--params', '{"ms": "soon"}');
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('/ms must be integer');
    const notJson = tool('dirigent/util/echo', '--params', '{oops');
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain('--params is not valid JSON');
  });

  it('exits 2 for a parameter value a built-in refuses as it is (a bad pattern, a path outside)', () => {
    const pattern = tool('dirigent/fs/grep', '--params', '{"pattern": "(("}', '--json');
    expect(pattern.code).toBe(2);
    expect(JSON.parse(pattern.stdout)).toMatchObject({
      ok: false,
      error: { code: 'INVALID_PATTERN' },
    });
    const outside = tool('dirigent/fs/read', '--params', '{"file_path": "../../etc/passwd"}');
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain('PATH_OUTSIDE_PROJECT');
  });
});

describe('dirigent tool show', () => {
  const show = (...args: string[]) =>
    spawnSync(process.execPath, [CLI_MAIN, 'tool', 'show', ...args, '--project', project], {
      encoding: 'utf8',
    });

  it('describes a built-in tool, which has no file: its description and parameters', () => {
    const text = show('dirigent/fs/grep');
    expect(text.status).toBe(0);
    expect(text.stdout).toContain('dirigent/fs/grep: built in');
    expect(text.stdout).toMatch(/^ {2}pattern: string/m);
    const json = show('rye/file-system/read', '--json');
    expect(json.status).toBe(0);
    const shown = JSON.parse(json.stdout) as { builtin: boolean; params: { properties: object } };
    expect(shown).toMatchObject({
      ok: true,
      itemId: 'rye/file-system/read',
      builtin: true,
      chain: [],
    });
    expect(Object.keys(shown.params.properties)).toContain('file_path');
  });

  it('exits 2 for a tool no space holds', () => {
    const r = show('dirigent/fs/reed');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('UNKNOWN_TOOL');
  });
});
