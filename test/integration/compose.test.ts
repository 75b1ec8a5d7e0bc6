/**
 * `docker-compose.yml` runs what the tests run: Redis with its append-only file, and workers whose
 * command, started here as compose would start it (the image's `/app` is this repository), serves
 * runs on the real Redis and their metrics, and drains on compose's stop signal. Every port it
 * publishes is on 127.0.0.1. No Docker engine is needed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CLI_MAIN, DIRECTIVES, REPO_ROOT } from '../support/paths.js';
import { redisForTest } from '../support/redis.js';
import { freePort } from '../support/dirigent-processes.js';
import { waitFor } from '../support/wait-for.js';
import { parseRedisUrl } from '../../src/redis/redis-endpoint.js';
import { chosenShardCount } from '../../src/redis/shards/shard-count.js';

interface Compose {
  services: Record<
    string,
    {
      command?: string[];
      stop_signal?: string;
      environment?: Record<string, string>;
      ports?: string[];
      profiles?: string[];
    }
  >;
}

const compose = parse(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), {
  merge: true,
}) as Compose;
const redis = redisForTest();

describe('docker-compose.yml', { timeout: 60_000 }, () => {
  it('keeps Redis append-only, so queues and runs survive its restart', () => {
    expect(compose.services.redis!.command).toEqual(
      expect.arrayContaining(['--appendonly', 'yes']),
    );
  });

  it('publishes every port on 127.0.0.1 only', () => {
    const ports = Object.values(compose.services).flatMap((s) => s.ports ?? []);
    expect(ports.length).toBeGreaterThan(0);
    for (const p of ports) expect(p).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
  });

  it("starts workers with the CLI's own worker command, which serves runs and metrics and drains on its stop signal", async () => {
    const worker = compose.services.worker!;
    const [program, ...command] = worker.command!.map((a) =>
      a.replace(/^\/app\//, `${REPO_ROOT}/`),
    );
    expect(program).toBe('node');
    expect(command.slice(0, 2)).toEqual([CLI_MAIN, 'worker']);
    expect(command).toEqual(expect.arrayContaining(['--metrics-port', '--metrics-host']));
    // In compose the metrics endpoint listens on 0.0.0.0:9464 of the worker's own container, for
    // Prometheus to reach over the compose network. Here that would be this machine's every
    // address, on a port something else may hold: the test serves it on 127.0.0.1 and a free port.
    const port = await freePort();
    // The project compose mounts at /project is, here, this repository.
    expect(command).toEqual(expect.arrayContaining(['--project', '/project']));
    const args = command.map((a, i) =>
      command[i - 1] === '--metrics-host'
        ? '127.0.0.1'
        : command[i - 1] === '--metrics-port'
          ? String(port)
          : command[i - 1] === '--project'
            ? REPO_ROOT
            : a,
    );
    const env = { ...process.env, REDIS_URL: redis.url, DIRIGENT_PREFIX: redis.prefix };
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      await new Promise<void>((serving, failed) => {
        let err = '';
        child.stderr!.on('data', (c: Buffer) => {
          err += c.toString();
          if (err.includes('jobs from')) serving();
        });
        child.once('exit', (code) => failed(new Error(`worker exited (${code}): ${err}`)));
      });
      const run = spawnSync(
        process.execPath,
        [CLI_MAIN, 'run', join(DIRECTIVES, 'hello.md'), '--input', 'name=Ada', '--json'],
        { env, encoding: 'utf8', cwd: REPO_ROOT, timeout: 30_000 },
      );
      expect(run.status).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ status: 'completed' });
      const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toMatch(/^dirigent_run_started_total\{/m);
    } finally {
      const exited = new Promise<number | null>((r) => child.once('exit', r));
      child.kill(worker.stop_signal as NodeJS.Signals);
      expect(await exited).toBe(0);
    }
  });

  it("serves the API with the CLI's own serve command, on the deployment's Redis and project", async () => {
    const api = compose.services.api!;
    const [program, ...command] = api.command!.map((a) => a.replace(/^\/app\//, `${REPO_ROOT}/`));
    expect(program).toBe('node');
    expect(command.slice(0, 2)).toEqual([CLI_MAIN, 'serve']);
    expect(command).toEqual(expect.arrayContaining(['--project', '/project', '--host', '0.0.0.0']));
    expect(api.environment?.DIRIGENT_API_TOKENS).toMatch(/^\$\{DIRIGENT_API_TOKENS:\?/);
    // As for the worker: here on 127.0.0.1, a free port, and this repository as the project.
    const port = await freePort();
    const args = command.map((a, i) =>
      command[i - 1] === '--host'
        ? '127.0.0.1'
        : command[i - 1] === '--port'
          ? String(port)
          : command[i - 1] === '--project'
            ? REPO_ROOT
            : a,
    );
    const env = {
      ...process.env,
      REDIS_URL: redis.url,
      DIRIGENT_PREFIX: redis.prefix,
      DIRIGENT_API_TOKENS: 'compose-test-token-0123456789',
    };
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      const health = await waitFor(
        () => fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined),
        { what: 'the server to answer /healthz', timeoutMs: 10_000, intervalMs: 100 },
      );
      expect(health.status).toBe(200);
      const unauthorized = await fetch(`http://127.0.0.1:${port}/v1/runs`);
      expect(unauthorized.status).toBe(401);
    } finally {
      const exited = new Promise<number | null>((r) => child.once('exit', r));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });

  it('has an optional cluster profile: three cluster nodes and workers naming them, with a shard count', () => {
    const cluster = Object.entries(compose.services).filter(([, s]) =>
      s.profiles?.includes('cluster'),
    );
    expect(cluster.map(([name]) => name).sort()).toEqual([
      'cluster-worker',
      'redis-cluster-1',
      'redis-cluster-2',
      'redis-cluster-3',
      'redis-cluster-init',
    ]);
    const worker = compose.services['cluster-worker']!;
    const endpoint = parseRedisUrl(worker.environment!.REDIS_URL!);
    expect(endpoint).toMatchObject({ kind: 'cluster' });
    expect(endpoint.kind === 'cluster' && endpoint.nodes.map((n) => n.host)).toEqual([
      'redis-cluster-1',
      'redis-cluster-2',
      'redis-cluster-3',
    ]);
    expect(chosenShardCount(undefined, REPO_ROOT, worker.environment)).toBe(6);
    expect(worker.command!.slice(1, 3)).toEqual(['/app/dist/cli/main.js', 'worker']);
  });
});
