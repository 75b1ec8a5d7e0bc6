/**
 * A process that started tools and is killed outright (SIGKILL, as the OOM killer does) leaves
 * nothing running: the group reaper kills the process group of every call, warm host and MCP
 * server it started, grandchildren included, within 2 s, with no help from the dead process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { alive } from '../../support/process-alive.js';
import { REPO_ROOT } from '../../support/paths.js';
import { waitFor } from '../../support/wait-for.js';

let project: string;
afterEach(() => rmSync(project, { recursive: true, force: true }));

/** Every process below `root`, with its command line: read from /proc. */
function descendants(root: number): { pid: number; command: string }[] {
  const children = new Map<number, number[]>();
  const commands = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
      commands.set(
        Number(entry),
        readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' '),
      );
    } catch {
      // gone meanwhile
    }
  }
  const found: { pid: number; command: string }[] = [];
  const stack = [root];
  while (stack.length > 0) {
    for (const pid of children.get(stack.pop()!) ?? []) {
      found.push({ pid, command: commands.get(pid) ?? '' });
      stack.push(pid);
    }
  }
  return found;
}

describe('the group reaper', () => {
  it('kills every tool process of a process killed with SIGKILL within 2 s', async () => {
    project = mkdtempSync(join(tmpdir(), 'dirigent-reaper-'));
    const script = resolve('test/fixtures/reaper/start-tools.mjs');
    const child = spawn(
      process.execPath,
      [script, project, join(REPO_ROOT, 'dist'), resolve('test/fixtures')],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((ready, failed) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && ready());
      child.once('exit', (code) => failed(new Error(`the tool starter exited (${code})`)));
    });
    const started = await waitFor(
      () => {
        const now = descendants(child.pid!);
        return now.some((p) => /deno/.test(p.command)) && now;
      },
      { what: 'the Deno host among the tool processes', timeoutMs: 10_000 },
    );
    const kinds = ['bash -c sleep', 'sleep 600', 'python', 'deno'];
    for (const kind of kinds)
      expect(started.map((p) => p.command).join('\n'), kind).toContain(kind.split(' ')[0]);
    expect(started.length).toBeGreaterThanOrEqual(9);

    const killed = Date.now();
    child.kill('SIGKILL'); // the process alone, not its group
    await waitFor(() => !started.some((p) => alive(p.pid)), {
      what: 'every tool process to die',
      timeoutMs: 2000,
    }).catch(() => undefined); // the assertion below says which are left
    const left = started.filter((p) => alive(p.pid));
    expect(left, `alive ${Date.now() - killed} ms after the kill`).toEqual([]);
  });
});
