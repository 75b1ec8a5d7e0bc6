/**
 * The chaos run's `dirigent worker` processes: started, killed (SIGKILL), paused (SIGSTOP) and
 * restarted, with everything each one logged (JSON lines) and when each was killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** One worker process and what it logged. */
export interface PooledWorker {
  slot: number;
  child: ChildProcess;
  log: string[];
  /** The lease names it announced (see `redis/takeover/worker-lease.ts`). */
  leases: string[];
}

/** A worker killed, and when. */
export interface Kill {
  at: number;
  leases: string[];
}

/** A pool of `size` workers of one project on one Redis. */
export class WorkerPool {
  readonly workers: (PooledWorker | undefined)[];
  readonly kills: Kill[] = [];
  /** Every line every worker logged, in order of arrival. */
  readonly lines: string[] = [];
  private closed = false;
  /**
   * Slots being killed or restarted: a kill or pause of one waits its turn (is skipped), so that
   * two restarts of a slot never run at once, each starting a worker of which one goes untracked
   * (alive, never killed: on a slow machine they pile up).
   */
  private readonly busy = new Set<number>();

  constructor(
    private readonly cli: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly project: string,
    size: number,
  ) {
    this.workers = Array.from({ length: size }, () => undefined);
  }

  /** Starts every slot's worker; resolves once each serves. */
  async start(): Promise<void> {
    await Promise.all(this.workers.map((_, slot) => this.startSlot(slot)));
  }

  /** Starts the worker of `slot` (again); resolves once it serves, or rejects if it exits. */
  async startSlot(slot: number): Promise<void> {
    const child = spawn(process.execPath, [this.cli, 'worker', '--project', this.project], {
      env: this.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const w: PooledWorker = { slot, child, log: [], leases: [] };
    this.workers[slot] = w;
    let rest = '';
    await new Promise<void>((served, failed) => {
      child.stderr!.on('data', (c: Buffer) => {
        rest += c.toString();
        const lines = rest.split('\n');
        rest = lines.pop()!;
        for (const line of lines) {
          w.log.push(line);
          this.lines.push(line);
          const lease = /taking [a-z-]+ jobs as ([^\s,]+)/.exec(line);
          if (lease) w.leases.push(lease[1]!);
          if (line.includes('jobs from')) served();
        }
      });
      child.once('exit', (code) =>
        failed(new Error(`worker exited (${code}): ${w.log.join('\n')}`)),
      );
    });
  }

  /** Whether the slot's worker is being killed, restarted or paused (see {@link busy}). */
  isBusy(slot: number): boolean {
    return this.busy.has(slot);
  }

  /**
   * SIGKILLs the worker of `slot` and starts another in its place after `restartAfterMs`; false
   * (nothing done) while the slot is busy.
   */
  async kill(slot: number, restartAfterMs: number): Promise<boolean> {
    const w = this.workers[slot];
    if (w === undefined || w.child.exitCode !== null || this.busy.has(slot)) return false;
    this.busy.add(slot);
    try {
      const exited = new Promise((r) => w.child.once('exit', r));
      w.child.kill('SIGKILL');
      this.kills.push({ at: Date.now(), leases: w.leases });
      await exited;
      this.workers[slot] = undefined;
      await new Promise((r) => setTimeout(r, restartAfterMs));
      await this.restart(slot);
      return true;
    } finally {
      this.busy.delete(slot);
    }
  }

  /**
   * Pauses the worker of `slot` (SIGSTOP) for `ms`, then lets it go on (SIGCONT); false (nothing
   * done) while the slot is busy.
   */
  async pause(slot: number, ms: number): Promise<boolean> {
    const w = this.workers[slot];
    if (w === undefined || this.busy.has(slot)) return false;
    this.busy.add(slot);
    try {
      w.child.kill('SIGSTOP');
      await new Promise((r) => setTimeout(r, ms));
      w.child.kill('SIGCONT');
      return true;
    } finally {
      this.busy.delete(slot);
    }
  }

  /** Starts the slot's worker again, retrying while Redis is away. */
  async restart(slot: number): Promise<void> {
    for (let i = 0; i < 50 && !this.closed; i++) {
      try {
        await this.startSlot(slot);
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  /** Ends every worker (SIGTERM, then SIGKILL after 10 s). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      this.workers.map(async (w) => {
        if (w === undefined || w.child.exitCode !== null || w.child.signalCode !== null) return;
        const exited = new Promise((r) => w.child.once('exit', r));
        w.child.kill('SIGCONT');
        w.child.kill('SIGTERM');
        const t = setTimeout(() => w.child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(t);
      }),
    );
  }
}
