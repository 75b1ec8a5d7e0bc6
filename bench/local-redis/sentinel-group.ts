/**
 * A Sentinel deployment of the caller's own on free loopback ports: a primary, one replica and
 * three sentinels (quorum 2) watching them, in a temporary folder. The failover tests and the
 * benchmarks start one, kill its primary, and watch the sentinels promote the replica; the
 * machine's own Redis is never touched. {@link SentinelGroup.stop} ends every process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { answers, freePort, stop } from './loopback.js';

/** The master name the sentinels watch. */
const NAME = 'dirigent';

/** A running Sentinel deployment (see the module comment). */
export class SentinelGroup {
  /** The Redis servers (primary, replica) by port. */
  private readonly servers = new Map<number, ChildProcess>();
  private readonly sentinels: ChildProcess[] = [];
  private readonly sentinelPorts: number[] = [];

  private constructor(private readonly dir: string) {}

  /** Starts the group and resolves once the sentinels watch the primary and its replica. */
  static async start(): Promise<SentinelGroup> {
    const group = new SentinelGroup(mkdtempSync(join(tmpdir(), 'dirigent-sentinel-')));
    try {
      const primary = await group.server();
      await group.server(primary);
      for (let i = 0; i < 3; i++) await group.sentinel(primary);
      await group.settled(primary);
      return group;
    } catch (err) {
      await group.stop();
      throw err;
    }
  }

  /** The deployment's URL, as Dirigent takes it. */
  get url(): string {
    return `redis+sentinel://${this.sentinelPorts.map((p) => `127.0.0.1:${p}`).join(',')}/${NAME}`;
  }

  /** The port of the primary the sentinels name now. */
  async primaryPort(): Promise<number> {
    const sentinel = new Redis(this.sentinelPorts[0]!, '127.0.0.1', { maxRetriesPerRequest: 1 });
    try {
      const addr = (await sentinel.call('SENTINEL', 'get-master-addr-by-name', NAME)) as string[];
      return Number(addr[1]);
    } finally {
      sentinel.disconnect();
    }
  }

  /** Kills the primary with SIGKILL; resolves with the port it served and when it died. */
  async killPrimary(): Promise<{ port: number; at: number }> {
    const port = await this.primaryPort();
    const child = this.servers.get(port)!;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    return { port, at: Date.now() };
  }

  /** Resolves once the sentinels name a primary other than `port`, and it answers as one. */
  async failedOver(port: number, timeoutMs = 30_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const now = await this.primaryPort().catch(() => port);
      if (now !== port) {
        const node = new Redis(now, '127.0.0.1', { maxRetriesPerRequest: 1 });
        const role = await node.call('ROLE').catch(() => []);
        node.disconnect();
        if ((role as string[])[0] === 'master') return now;
      }
      if (Date.now() > deadline) throw new Error(`no failover from ${port} in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Ends every process of the group and removes its files. */
  async stop(): Promise<void> {
    await Promise.all([...this.sentinels, ...this.servers.values()].map(stop));
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Starts a Redis server, a replica of `primary` when given one; resolves with its port. */
  private async server(primary?: number): Promise<number> {
    const port = await freePort();
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', this.dir];
    args.push('--appendonly', 'no', '--dbfilename', `dump-${port}.rdb`);
    if (primary !== undefined) args.push('--replicaof', '127.0.0.1', String(primary));
    this.servers.set(port, spawn('redis-server', args, { stdio: 'ignore' }));
    await answers(port);
    return port;
  }

  /** Starts a sentinel watching `primary`: down after 1 s, a quorum of 2. */
  private async sentinel(primary: number): Promise<void> {
    const port = await freePort();
    const conf = join(this.dir, `sentinel-${port}.conf`);
    writeFileSync(
      conf,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${this.dir}`,
        `sentinel monitor ${NAME} 127.0.0.1 ${primary} 2`,
        `sentinel down-after-milliseconds ${NAME} 1000`,
        `sentinel failover-timeout ${NAME} 5000`,
        `sentinel parallel-syncs ${NAME} 1`,
        '',
      ].join('\n'),
    );
    this.sentinels.push(spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' }));
    this.sentinelPorts.push(port);
    await answers(port);
  }

  /** Resolves once every sentinel knows the replica and the other sentinels, and it is in sync. */
  private async settled(primary: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const probes = this.sentinelPorts.map(
      (p) => new Redis(p, '127.0.0.1', { maxRetriesPerRequest: 1 }),
    );
    const node = new Redis(primary, '127.0.0.1', { maxRetriesPerRequest: 1 });
    try {
      for (;;) {
        const states = await Promise.all(
          probes.map(async (probe) => {
            const master = (await probe.call('SENTINEL', 'master', NAME)) as string[];
            const field = (name: string) => Number(master[master.indexOf(name) + 1]);
            return field('num-slaves') >= 1 && field('num-other-sentinels') >= 2;
          }),
        );
        const info = await node.info('replication');
        const synced = /slave0:.*state=online/.test(info);
        if (states.every(Boolean) && synced) return;
        if (Date.now() > deadline) throw new Error('the sentinel group did not settle');
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      for (const p of probes) p.disconnect();
      node.disconnect();
    }
  }
}
