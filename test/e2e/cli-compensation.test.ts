/**
 * `dirigent cancel` of a saga, end to end: the compiled CLI in real processes, in a fresh
 * temporary project. A run waiting in `.dirigent/runs/` is cancelled from another process, which
 * runs the compensations of its completed steps first, or none with `--no-compensate`.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/engine/run-record.js';
import { writeDirective } from '../support/directive-file.js';
import { CLI_MAIN } from '../support/paths.js';

let project: string;
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-cli-saga-'));
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, reject) => {
    const child = spawn(process.execPath, [CLI_MAIN, ...args], {
      cwd: project,
      env: { ...process.env, NO_COLOR: '1', DIRIGENT_USER_SPACE: join(project, 'user') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

async function json(args: string[]): Promise<{ code: number | null; record: RunRecord }> {
  const r = await cli([...args, '--project', project, '--json']);
  try {
    return { code: r.code, record: JSON.parse(r.stdout) as RunRecord };
  } catch {
    throw new Error(`stdout is not one JSON object (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
}

/** Starts a run of the saga, which waits after its compensable step: its id. */
async function waitingSaga(): Promise<string> {
  const file = writeDirective(
    project,
    'saga',
    `<process>
      <step name="reserve">
        <execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo -n r1"/></execute>
        <compensate><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo undone \${result.stdout} >> undo.log"/></execute></compensate>
      </step>
      <step name="hold"><wait signal="go"/></step>
    </process>`,
  );
  const { code, record } = await json(['run', file]);
  expect(code).toBe(3);
  return record.runId;
}

const undone = () =>
  existsSync(join(project, 'undo.log'))
    ? readFileSync(join(project, 'undo.log'), 'utf8').trim().split('\n')
    : [];

describe('dirigent cancel of a saga', { timeout: 30_000 }, () => {
  it('runs the compensations of the completed steps, then prints the cancelled run (exit 1)', async () => {
    const runId = await waitingSaga();
    const { code, record } = await json(['cancel', runId]);
    expect(code).toBe(1);
    expect(record).toMatchObject({ runId, status: 'cancelled', error: { code: 'CANCELLED' } });
    expect(record.steps.map((s) => `${s.name}:${s.status}`)).toEqual([
      'reserve:completed',
      'hold:cancelled',
      'compensate:reserve:completed',
    ]);
    expect(undone()).toEqual(['undone r1']);
  });

  it('with --no-compensate ends the run at once, its completed step left as it is', async () => {
    const runId = await waitingSaga();
    const { code, record } = await json(['cancel', runId, '--no-compensate']);
    expect(code).toBe(1);
    expect(record.status).toBe('cancelled');
    expect(record.steps.map((s) => `${s.name}:${s.status}`)).toEqual([
      'reserve:completed',
      'hold:cancelled',
    ]);
    expect(undone()).toEqual([]);
    const help = await cli(['cancel', '--help']);
    expect(help.stdout).toContain('--no-compensate');
  });
});
