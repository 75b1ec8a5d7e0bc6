/**
 * Real `dirigent` processes for end-to-end tests: workers that are serving once returned, CLI
 * commands with their output, and an `afterEach` that ends every process a test started (and,
 * when the test failed, prints what its workers wrote, so that a failure says what they saw).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach } from 'vitest';
import { CLI_MAIN } from './paths.js';
import { waitFor } from './wait-for.js';

/** Tracks the processes of a test file; call at its top. */
export function dirigentProcesses() {
  let spawned: ChildProcess[] = [];
  /** What each worker of the test wrote on stderr, its last 8,000 characters. */
  let logs = new Map<ChildProcess, string>();
  afterEach(async ({ task }) => {
    const live = spawned.filter((p) => p.exitCode === null && p.signalCode === null);
    const exited = live.map((p) => new Promise((r) => p.once('exit', r)));
    for (const p of live) p.kill('SIGKILL');
    await Promise.all(exited);
    if (task.result?.state === 'fail')
      for (const [child, log] of logs)
        console.error(`worker ${child.pid} (${task.name}) wrote:\n${log}`);
    spawned = [];
    logs = new Map();
  });
  /** `node …argv`, resolved once it serves (its start line on stderr names "jobs from"). */
  const serving = (env: NodeJS.ProcessEnv, argv: string[]): Promise<ChildProcess> => {
    const child = spawn(process.execPath, argv, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    spawned.push(child);
    return new Promise((served, failed) => {
      child.stderr!.on('data', (c: Buffer) => {
        const log = ((logs.get(child) ?? '') + c.toString()).slice(-8000);
        logs.set(child, log);
        if (log.includes('jobs from')) served(child);
      });
      child.once('exit', (code) =>
        failed(new Error(`worker exited (${code}): ${logs.get(child) ?? ''}`)),
      );
    });
  };
  return {
    serving,
    /** `dirigent worker …args`, once it serves. */
    worker: (env: NodeJS.ProcessEnv, ...args: string[]) =>
      serving(env, [CLI_MAIN, 'worker', ...args]),
    /** `dirigent …args`, resolved with its exit code and output when it exits. */
    cli(
      env: NodeJS.ProcessEnv,
      ...args: string[]
    ): Promise<{ code: number | null; stdout: string; stderr: string }> {
      return new Promise((done) => {
        const child = spawn(process.execPath, [CLI_MAIN, ...args], { env });
        spawned.push(child);
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        child.on('exit', (code) => done({ code, stdout, stderr }));
      });
    },
  };
}

/**
 * Resolves once `check()` holds, polling it; rejects after `ms` naming `what`. The older form of
 * {@link waitFor}, which new tests use.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  ms = 15_000,
  what = 'condition',
): Promise<void> {
  await waitFor(check, { timeoutMs: ms, what, intervalMs: 50 });
}

/** A port nothing listens on now: one the system hands out, released at once. */
export { freePort } from '../../bench/local-redis/loopback.js';
