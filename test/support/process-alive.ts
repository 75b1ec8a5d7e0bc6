import { readFileSync } from 'node:fs';

/** Whether a process runs (a zombie awaiting its reaper counts as gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
