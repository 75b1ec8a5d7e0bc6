/**
 * A Redis server of the chaos run's own, on a free loopback port, with an append-only file that
 * is synced at every write: restarted, it comes back with everything it acknowledged.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { answers, freePort } from './loopback.js';

/** A private `redis-server`. */
export class PrivateRedis {
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  /** Starts a server keeping its files in `dir`. */
  static async start(dir: string): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort(), dir);
    await r.up();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Shuts the server down (its append-only file complete) and starts it again on the same port. */
  async restart(): Promise<number> {
    const at = Date.now();
    await this.down();
    await this.up();
    return Date.now() - at;
  }

  /** Shuts the server down. */
  async down(): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM'); // a clean shutdown: the append-only file is flushed
    await exited;
    this.child = undefined;
  }

  private async up(): Promise<void> {
    this.child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
      ],
      { stdio: 'ignore' },
    );
    await answers(this.port);
  }
}
