/**
 * `dirigent runs export` as people run it (the built CLI, embedded): it says how many runs it
 * wrote; killed (SIGKILL) in the middle and run again with the same --out, the file ends up with
 * every run once; options that do not read and files it cannot write exit 2 with a code, never
 * INTERNAL.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Dirigent } from '../../src/operations/dirigent.js';
import { writeDirective } from '../support/directive-file.js';
import { CLI_MAIN } from '../support/paths.js';
import { waitFor } from '../support/wait-for.js';

/** Runs in the project: enough pages (of one run) for an export to be killed half way. */
const RUNS = 200;

let project: string;
let ids: string[];

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-export-cli-'));
  const directives = join(project, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeDirective(
    directives,
    'note',
    `<metadata><description>A note</description></metadata>
    <inputs><input name="n" type="number" required="true"/></inputs>
    <process><step name="say"><render>note \${inputs.n}</render></step></process>
    <outputs><output name="said" expr="steps.say.result"/></outputs>`,
  );
  const dirigent = await Dirigent.open({ project });
  ids = [];
  for (let n = 0; n < RUNS; n++)
    ids.push((await dirigent.run({ directive: 'note', inputs: { n } })).runId);
  await dirigent.close();
}, 60_000);
afterAll(() => rmSync(project, { recursive: true, force: true }));

function cli(...args: string[]) {
  const r = spawnSync(
    process.execPath,
    [CLI_MAIN, 'runs', 'export', '--project', project, ...args],
    {
      encoding: 'utf8',
      env: { ...process.env, REDIS_URL: '' },
      timeout: 60_000,
    },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** An export file the refused commands name (none of them writes it). */
const X = join(tmpdir(), 'dirigent-export-cli-refused.jsonl');

const lines = (file: string) =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];

describe('dirigent runs export', { timeout: 120_000 }, () => {
  it('says how many runs it wrote, and --json prints the report', () => {
    const out = join(project, 'all.jsonl');
    const text = cli('--out', out);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`${RUNS} runs written to ${out} (0 already there)`);
    const json = cli('--out', out, '--since', '1h', '--json');
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      file: out,
      written: 0,
      skipped: RUNS,
      notEnded: 0,
      repaired: false,
    });
  });

  it('goes on after being killed: every run is in the file once', async () => {
    const out = join(project, 'killed.jsonl');
    const child = spawn(
      process.execPath,
      [CLI_MAIN, 'runs', 'export', '--project', project, '--out', out, '--page-size', '1'],
      { env: { ...process.env, REDIS_URL: '' }, stdio: 'ignore' },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await waitFor(() => lines(out).length >= 5, { what: 'five runs exported', timeoutMs: 30_000 });
    child.kill('SIGKILL');
    await exited;
    const before = lines(out).length;
    expect(before).toBeLessThan(RUNS);

    const again = cli('--out', out, '--json');
    expect(again.code, again.stderr).toBe(0);
    const report = JSON.parse(again.stdout) as { written: number; skipped: number };
    const written = lines(out).map((l) => (JSON.parse(l) as { runId: string }).runId);
    expect(written).toHaveLength(RUNS);
    expect(new Set(written)).toEqual(new Set(ids));
    expect(report.written + report.skipped).toBe(RUNS);
  });

  it.each([
    [['--out', X, '--since', 'yesterday'], 'INVALID_REQUEST', '--since must be a time'],
    [['--out', X, '--until', '2025-13-45'], 'INVALID_REQUEST', '--until must be a time'],
    [['--out', X, '--status', 'running'], 'INVALID_REQUEST', 'writes ended runs'],
    [['--out', X, '--tag', 'nothing'], 'INVALID_REQUEST', ''],
    [[], 'INVALID_REQUEST', 'needs --out'],
    [['--out', '/'], 'IS_A_DIRECTORY', 'is a folder'],
    [['--out', '/no/such/folder/x.jsonl'], 'FILE_NOT_FOUND', 'does not exist'],
  ])('refuses %j with %s and exit 2, writing nothing', (args, code, says) => {
    const r = cli(...args, '--json');
    expect(r.code, r.stderr).toBe(2);
    const { error } = JSON.parse(r.stdout) as { error: { code: string; message: string } };
    expect(error.code).toBe(code);
    expect(error.message).toContain(says);
    const text = cli(...args);
    expect(text.stderr).toContain(`[${code}]`);
    expect(text.stderr).toMatch(/hint: \S/);
    expect(existsSync(X)).toBe(false);
  });
});
