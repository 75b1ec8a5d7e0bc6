/**
 * In a real pseudo-terminal (`script`, util-linux), `batchProgress` draws its bar with cursor
 * control codes, redraws it in place, and leaves the final counts on a line of their own. Uses the
 * built module (`npm test` builds before the tests run).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/paths.js';

const BUILT = join(REPO_ROOT, 'dist', 'src', 'batches', 'batch-progress.js');
const hasScript = spawnSync('script', ['--version']).status === 0;

/** A batch of 400 inputs over 1.2 s, 10,000 bytes of input read as it goes. */
const CHILD = `
import { batchProgress } from ${JSON.stringify(pathToFileURL(BUILT).href)};
let read = 0;
let done = 0;
const progress = batchProgress({ tty: true, bytes: () => ({ read: read * 25, total: 10_000 }) });
const timer = setInterval(() => {
  read = Math.min(400, read + 40);
  done = Math.min(read, done + 34);
  const counts = { read, done, completed: done - Math.floor(done / 50), failed: Math.floor(done / 50), running: read - done, skipped: 0 };
  if (done < 400) return progress.update(counts);
  clearInterval(timer);
  progress.stop(counts);
}, 100);
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dirigent-progress-pty-'));
  await writeFile(join(dir, 'child.mjs'), CHILD);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Runs `command` in a pseudo-terminal 120 columns wide; gives all it wrote. */
function inTerminal(command: string): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn('script', ['-qfec', `stty cols 120 rows 30; ${command}`, '/dev/null'], {
      cwd: dir,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, output });
    });
  });
}

describe.skipIf(!hasScript)('batchProgress in a pseudo-terminal', () => {
  it('draws the bar with counts, rate and ETA in place, then leaves the final line', async () => {
    expect(existsSync(BUILT), `${BUILT} is missing: run npm run build first`).toBe(true);
    const { code, output } = await inTerminal(`${JSON.stringify(process.execPath)} child.mjs`);
    expect(code).toBe(0);
    // The bar: a bar, the share done, the counts, the rate, the elapsed time and the ETA.
    expect(output).toMatch(
      /batch \[█*░*\] \d+% \| \d+ done, \d+ failed, \d+ running \| [\d.,]+\/s \| \ds \| ETA (\ds|--)/,
    );
    expect(output).toMatch(/ETA \ds/);
    // Redrawn in place: back to the column 1, the rest of the line cleared; line wrapping off while
    // it is drawn, and on again after.
    expect(output).toContain('\x1b[1G');
    expect(output).toContain('\x1b[0K');
    expect(output).toContain('\x1b[?7l');
    expect(output).toContain('\x1b[?7h');
    expect(output.split('\x1b[1G').length).toBeGreaterThan(5);
    // Cleared on stop, the final counts printed in its place.
    const cleared = output.lastIndexOf('\x1b[2K');
    expect(cleared).toBeGreaterThan(output.lastIndexOf('ETA'));
    expect(output.slice(cleared + '\x1b[2K'.length).replaceAll('\r', '')).toMatch(
      /^batch: 400 done \(392 completed, 8 failed\), 0 running, [\d.,]+\/s, 1s, 100%\n$/,
    );
  });
});
