/**
 * `dirigent worker` and the environment-configured `dist/workers/worker.js` refuse what they cannot
 * serve, saying what to do, before they connect to anything.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_MAIN, REPO_ROOT } from '../support/paths.js';

const WORKER_ENTRY = join(REPO_ROOT, 'dist', 'workers', 'worker.js');
/** A Redis URL nothing answers at: nothing here may get as far as connecting. */
const NOWHERE = 'redis://127.0.0.1:1';

const run = (argv: string[], env: Record<string, string>) =>
  spawnSync(process.execPath, argv, {
    encoding: 'utf8',
    env: { ...process.env, REDIS_URL: '', DIRIGENT_QUEUES: '', DIRIGENT_PROJECT: '', ...env },
    timeout: 15_000,
  });
const worker = (args: string[], env: Record<string, string>) =>
  run([CLI_MAIN, 'worker', ...args], env);
const entry = (env: Record<string, string>) => run([WORKER_ENTRY], env);

describe('dirigent worker', () => {
  it('needs a Redis URL (exit 2)', () => {
    const r = worker([], {});
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('needs Redis: pass --redis <url> or set REDIS_URL');
  });

  it('names the queues and the concurrency it takes when given others (exit 2)', () => {
    const r = worker(['--queues', 'runs,jobs'], {
      REDIS_URL: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      '--queues takes one or more of runs, tools, triggers (got runs,jobs)',
    );
    const c = worker(['--concurrency', 'many'], { REDIS_URL: NOWHERE });
    expect(c.status).toBe(2);
    expect(c.stderr).toContain('--concurrency takes a whole number of at least 1 (got many)');
  });

  it('refuses a project folder that does not exist, and a metrics port that is none (exit 2)', () => {
    const r = worker(['--project', join(REPO_ROOT, 'no-such-project')], { REDIS_URL: NOWHERE });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      `The project folder ${join(REPO_ROOT, 'no-such-project')} does not exist`,
    );
    const m = worker(['--metrics-port', 'http'], { REDIS_URL: NOWHERE });
    expect(m.status).toBe(2);
    expect(m.stderr).toContain('--metrics-port takes a port number from 1 to 65535 (got http)');
  });

  it('exits 1 when Redis does not answer', () => {
    const r = worker(['--redis', NOWHERE], {});
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('does not answer');
  });
});

describe('workers/worker.js (configured by the environment)', () => {
  it('needs REDIS_URL (exit 2)', () => {
    const r = entry({});
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('NEEDS_REDIS');
    expect(r.stderr).toContain('set REDIS_URL');
  });

  it('names the variable that is wrong (exit 2)', () => {
    const q = entry({ REDIS_URL: NOWHERE, DIRIGENT_QUEUES: 'runs,jobs' });
    expect(q.status).toBe(2);
    expect(q.stderr).toContain(
      'DIRIGENT_QUEUES takes one or more of runs, tools, triggers (got runs,jobs)',
    );
    const c = entry({ REDIS_URL: NOWHERE, DIRIGENT_CONCURRENCY: '0' });
    expect(c.status).toBe(2);
    expect(c.stderr).toContain('DIRIGENT_CONCURRENCY takes a whole number of at least 1 (got 0)');
    const m = entry({ REDIS_URL: NOWHERE, DIRIGENT_METRICS_PORT: '70000' });
    expect(m.status).toBe(2);
    expect(m.stderr).toContain('DIRIGENT_METRICS_PORT takes a port number from 1 to 65535');
  });

  it('exits 1 when Redis does not answer', () => {
    const r = entry({ REDIS_URL: NOWHERE });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('does not answer');
  });
});
