/**
 * The CLI's commands that operate runs, embedded, as a person at a terminal gives them: redrive a
 * failed run, rerun it from a step with an edited input, act on runs in bulk (a dry run first,
 * `--json` reports), pause and resume a directive, and start with a priority; each prints and
 * exits as `run` does, and a mistake exits 2 with a message.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeDirective } from '../support/directive-file.js';
import { CLI_MAIN } from '../support/paths.js';

let project: string;
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-cli-operate-'));
  const directives = join(project, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeDirective(
    directives,
    'gate',
    `<inputs><input name="who" type="string" default="ada"/></inputs>
    <process>
      <step name="hello"><render>hi \${inputs.who}</render></step>
      <step name="gate"><retry attempts="1"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="test -f open"/></execute></step>
      <step name="bye"><render>bye \${inputs.who}</render></step>
    </process>
    <outputs><output name="said" value="\${steps.bye.result}"/></outputs>`,
  );
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    delete env.REDIS_URL;
    const child = spawn(process.execPath, [CLI_MAIN, ...args, '--project', project], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const json = <T>(r: { stdout: string }) => JSON.parse(r.stdout) as T;

describe(
  'dirigent redrive, rerun, cancel --all, pause and resume (embedded)',
  { timeout: 60_000 },
  () => {
    it('redrives a failed run under its id and reruns it from a step with an edited input', async () => {
      const failed = await cli('run', 'gate', '--json');
      expect(failed.code).toBe(1);
      const { runId } = json<{ runId: string }>(failed);
      writeFileSync(join(project, 'open'), '');
      const redriven = await cli('redrive', runId);
      expect(redriven.code, redriven.stderr).toBe(0);
      expect(redriven.stdout).toMatch(/↺ redriven by cli:\S+ from gate/);
      expect(redriven.stdout).toMatch(/▸ gate \(attempt 2\)/);
      expect(redriven.stdout).toContain(`run ${runId} completed`);
      const again = await cli('redrive', runId, '--json');
      expect(again.code).toBe(1);
      expect(json<{ error: { code: string } }>(again).error.code).toBe('RUN_NOT_REDRIVABLE');

      const rerun = await cli('rerun', runId, '--from', 'bye', '--input', 'who=bo', '--json');
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(json<{ outputs: unknown; rerunOf: unknown }>(rerun)).toMatchObject({
        outputs: { said: 'bye bo' },
        rerunOf: { runId, step: 'bye' },
      });
      const bad = await cli('rerun', runId, '--from', 'nowhere');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/no step "nowhere"/);
    });

    it('counts a bulk cancel dry, acts with a JSON report, and refuses a run id with --all', async () => {
      for (const who of ['a', 'b']) await cli('run', 'gate', '--input', `who=${who}`);
      const dry = await cli('cancel', '--all', '--directive', 'gate', '--dry-run');
      expect(dry.code).toBe(0);
      expect(dry.stdout).toMatch(/^2 runs match; nothing was changed \(--dry-run\)\./);
      // Still shut: each run is redriven (the action acted), and fails again.
      const report = await cli('redrive', '--all', '--status', 'failed', '--json');
      expect(report.code, report.stderr).toBe(0);
      expect(json(report)).toEqual({ matched: 2, acted: 2, skipped: 0, failed: 0 });
      expect(report.stderr).toMatch(/action redrive-[0-9a-f]{16}/);
      const failedAgain = json<{ status: string; redrives?: unknown[] }[]>(
        await cli('runs', '--json'),
      );
      expect(failedAgain.map((r) => [r.status, r.redrives?.length])).toEqual([
        ['failed', 1],
        ['failed', 1],
      ]);
      const both = await cli('cancel', 'some-run', '--all');
      expect(both.code).toBe(2);
      expect(both.stderr).toMatch(/takes a run id or --all, not both/);
    });

    it('pauses and resumes a directive; a run of it waits as paused and exits 3', async () => {
      writeFileSync(join(project, 'open'), '');
      expect((await cli('pause', 'gate')).stdout).toContain('paused: gate');
      const held = await cli('run', 'gate', '--json');
      expect(held.code).toBe(3);
      expect(json<{ status: string }>(held).status).toBe('paused');
      const resumed = await cli('resume', 'gate', '--json');
      expect(json(resumed)).toEqual({ paused: { all: false, directives: [] }, resumed: 1 });
      const { runId } = json<{ runId: string }>(held);
      expect(json<{ status: string }>(await cli('status', runId, '--json')).status).toBe(
        'completed',
      );
      const wrong = await cli('run', 'gate', '--priority', '11');
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toMatch(/not a whole number from 1 to 10/);
      expect((await cli('pause')).code).toBe(2);
    });
  },
);
