/** Killing a whole process group, and telling when it is gone. */
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';

/** Time a process group gets to exit after SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 2000;

/** Kills a whole process group: SIGTERM, then SIGKILL if any member outlives the grace. */
export async function killGroup(pgid: number): Promise<void> {
  if (!signalGroup(pgid, 'SIGTERM')) return;
  if (await groupGone(pgid, KILL_GRACE_MS)) return;
  signalGroup(pgid, 'SIGKILL');
  await groupGone(pgid, 1000);
}

/** Sends `sig` to every process of group `pgid`; false when the group no longer exists (ESRCH). */
export function signalGroup(pgid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch {
    return false;
  }
}

async function groupGone(pgid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (await groupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await delay(25);
  }
  return true;
}

/**
 * Whether a live process is left in the group. Zombies do not count: they are dead and only wait
 * for init to reap them, which in some containers takes seconds.
 */
export async function groupAlive(pgid: number): Promise<boolean> {
  if (!signalGroup(pgid, 0)) return false;
  if (process.platform !== 'linux') return true;
  const pids = await readdir('/proc').catch(() => {
    /* No /proc to tell zombies apart (a sandbox without it): trust kill(). */
    return undefined;
  });
  if (pids === undefined) return true;
  for (const pid of pids) {
    if (pid.charCodeAt(0) > 57) continue; // not a process directory
    // A process that ended since the listing has no stat left: it is not in the group.
    const line = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    // Fields after the command name (which may hold spaces): state, ppid, pgrp, ...
    const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
    if (fields[2] === String(pgid) && fields[0] !== 'Z') return true;
  }
  return false;
}
