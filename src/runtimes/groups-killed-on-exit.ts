/**
 * Process groups of warm hosts (Python, Deno) that must not outlive this Node process. An idle
 * host exits by itself when its stdin closes, but a tool still running when Node exits, and
 * anything it forked, would be left behind; so the groups still alive are killed on `exit`.
 */
const live = new Set<number>();
let hooked = false;

/** Kill the process group `pgid` if Node exits while it is alive. */
export function killGroupOnExit(pgid: number): void {
  live.add(pgid);
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const g of live) {
      try {
        process.kill(-g, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/** The group ended (or was killed): forget it. */
export function forgetGroup(pgid: number): void {
  live.delete(pgid);
}
