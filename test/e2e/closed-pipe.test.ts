/** The CLI when its reader stops early (`dirigent run … | head -1`): no crash, no stack trace. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CLI_MAIN, DIRECTIVES } from '../support/paths.js';

it('exits quietly when stdout is closed after the first line', async () => {
  const project = mkdtempSync(join(tmpdir(), 'dirigent-pipe-'));
  try {
    const child = spawn(
      process.execPath,
      [CLI_MAIN, 'run', join(DIRECTIVES, 'branch_and_loop.md'), '--project', project],
      { env: { ...process.env, REDIS_URL: '' } },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
});
