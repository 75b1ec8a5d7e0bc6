/**
 * A tool's process gets /dev/null as stdin when it is given no input: with a socket there (Node's
 * pipes are sockets), bash takes itself for a remote shell and sources ~/.bashrc, running the
 * worker user's start-up files in every shell step (and costing 100 ms each on this machine).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runProcess } from '../../../src/runtimes/run-process.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'dirigent-home-'));
  writeFileSync(join(home, '.bashrc'), `touch "${join(home, 'sourced')}"\n`);
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const bash = (input?: string) =>
  runProcess({
    file: 'bash',
    args: ['-c', 'cat >/dev/null; echo ok'],
    cwd: home,
    env: { HOME: home, PATH: process.env.PATH ?? '/usr/bin:/bin' },
    timeoutMs: 10_000,
    signal: new AbortController().signal,
    label: 'bash',
    ...(input !== undefined && { input }),
  });

describe('a tool process without input', () => {
  it("never runs the user's ~/.bashrc", async () => {
    expect((await bash()).stdout).toBe('ok\n');
    expect(existsSync(join(home, 'sourced'))).toBe(false);
  });

  it('still gets its input on stdin when it has some', async () => {
    const r = await runProcess({
      file: 'bash',
      args: ['-c', 'cat'],
      cwd: home,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      timeoutMs: 10_000,
      signal: new AbortController().signal,
      label: 'cat',
      input: 'hello',
    });
    expect(r.stdout).toBe('hello');
  });
});
