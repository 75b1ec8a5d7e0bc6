/**
 * The process groups this Node process started for tools (a subprocess call, a warm Python or
 * Deno host, an MCP server), killed when this process dies, however it dies: SIGKILL, the OOM
 * killer, a crash, or a normal exit. A process cannot run code when it is killed, so the killing
 * is left to a small reaper: a shell started once, in a process group of its own, that reads the
 * groups to guard from a pipe only this process writes. When this process dies, the kernel closes
 * the pipe's end; the reaper reads end of file and kills every group still listed. It needs no
 * help from the dying process and catches grandchildren (they stay in the group), in a container
 * as on a host. So a call never runs beside its own retry: by the time another worker takes the
 * run over (a lease of seconds), the call's processes are gone.
 *
 * A process that leaves its group (`setsid`) leaves this guard too: a tool that daemonizes on
 * purpose is the author's to stop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { signalGroup } from './process-group.js';

/**
 * The reaper (POSIX sh): `+PGID` guards a group, `-PGID` releases it; at end of file every group
 * still guarded gets SIGKILL. Lines come from this module alone.
 */
const REAPER_SCRIPT = `
groups=' '
while IFS= read -r line; do
  case $line in
    +*) groups="$groups\${line#+} " ;;
    -*) gone=\${line#-}; kept=' '
        for g in $groups; do [ "$g" = "$gone" ] || kept="$kept$g "; done
        groups=$kept ;;
  esac
done
for g in $groups; do kill -KILL -"$g" 2>/dev/null; done
`;

const guarded = new Set<number>();
let reaper: ChildProcess | undefined;
/** Set when the reaper cannot start here (no `/bin/sh`): groups are then killed on exit only. */
let unavailable = false;

/**
 * Guards process group `pgid` (a child spawned `detached`, whose pid is its group): it is killed
 * if this process dies before {@link releaseGroup}. Call it right after the spawn.
 */
export function guardGroup(pgid: number): void {
  guarded.add(pgid);
  send(`+${pgid}\n`);
}

/**
 * The call or host that led group `pgid` is over: whatever it left running in the group is
 * killed, and the group is no longer guarded.
 */
export function endGroup(pgid: number): void {
  signalGroup(pgid, 'SIGKILL');
  releaseGroup(pgid);
}

/** The group ended, or was killed: it is no longer this process's to kill. */
export function releaseGroup(pgid: number): void {
  if (guarded.delete(pgid)) send(`-${pgid}\n`);
}

function send(line: string): void {
  if (unavailable) return;
  // A new reaper is told every guarded group as it starts.
  if (reaper === undefined) start();
  // A write on a pipe reaches the kernel before it returns, unless the pipe is full (it never is:
  // the reaper reads as fast as lines come).
  else reaper.stdin!.write(line);
}

function start(): void {
  let child: ChildProcess;
  try {
    child = spawn('/bin/sh', ['-c', REAPER_SCRIPT], {
      detached: true, // its own group: a signal to this process's group does not reach it
      stdio: ['pipe', 'ignore', 'ignore'],
    });
  } catch {
    return fallBack();
  }
  if (child.pid === undefined) return fallBack();
  // A reaper that fails or dies is replaced at the next guard (below), which lists every group.
  child.on('error', () => undefined);
  child.stdin!.on('error', () => undefined);
  child.on('exit', () => {
    // Killed from outside: the next guard starts another and lists every group again.
    if (reaper === child) reaper = undefined;
  });
  // Neither the reaper nor its pipe keeps this process alive.
  child.unref();
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  reaper = child;
  const lines = [...guarded].map((g) => `+${g}\n`).join('');
  if (lines !== '') child.stdin!.write(lines);
}

/** Without a reaper, the groups still guarded are killed when this process exits normally. */
function fallBack(): void {
  unavailable = true;
  process.on('exit', () => {
    for (const g of guarded) {
      try {
        process.kill(-g, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}
