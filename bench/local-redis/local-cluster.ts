/**
 * A Redis Cluster of the caller's own on free loopback ports: `primaries` nodes (3 by default)
 * made one cluster by `redis-cli --cluster create`, keeping nothing on disk but their cluster
 * files in a temporary folder. The tests, the benchmarks and `node dist/bench/local-redis/…`
 * start one; the machine's own Redis is never touched. {@link LocalCluster.stop} ends every node.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { answers, freePort, stop } from './loopback.js';

const run = promisify(execFile);

/** A running local cluster (see the module comment). */
export class LocalCluster {
  private constructor(
    /** The nodes' ports, in the order their slot ranges come (the first holds slot 0). */
    readonly ports: number[],
    private readonly children: ChildProcess[],
    private readonly dir: string,
  ) {}

  /** Starts `primaries` nodes and joins them into one cluster whose slots are all served. */
  static async start(primaries = 3): Promise<LocalCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'dirigent-cluster-'));
    const ports: number[] = [];
    const children: ChildProcess[] = [];
    const cluster = new LocalCluster(ports, children, dir);
    try {
      for (let i = 0; i < primaries; i++) {
        const port = await freePort();
        ports.push(port);
        children.push(
          spawn(
            'redis-server',
            [
              '--port',
              String(port),
              '--bind',
              '127.0.0.1',
              '--dir',
              dir,
              '--cluster-enabled',
              'yes',
              '--cluster-config-file',
              `nodes-${port}.conf`,
              '--cluster-node-timeout',
              '3000',
              '--save',
              '',
              '--appendonly',
              'no',
            ],
            { stdio: 'ignore' },
          ),
        );
      }
      await Promise.all(ports.map((p) => answers(p)));
      await run('redis-cli', [
        '--cluster',
        'create',
        ...ports.map((p) => `127.0.0.1:${p}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ]);
      await cluster.settled();
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  /** The cluster's URL, as Dirigent takes it. */
  get url(): string {
    return `redis+cluster://${this.ports.map((p) => `127.0.0.1:${p}`).join(',')}`;
  }

  /** Ends every node and removes the cluster's files. */
  async stop(): Promise<void> {
    await Promise.all(this.children.map(stop));
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Resolves once every node reports every slot served (`cluster_state:ok`). */
  private async settled(timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (const port of this.ports) {
      const node = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 });
      try {
        for (;;) {
          const info = (await node.call('CLUSTER', 'INFO')) as string;
          if (info.includes('cluster_state:ok')) break;
          if (Date.now() > deadline) throw new Error(`cluster node ${port} is not ok: ${info}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      } finally {
        node.disconnect();
      }
    }
  }
}
