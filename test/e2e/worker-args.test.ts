/** `dirigent worker` refuses what it cannot serve, saying what to do. */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI_MAIN } from '../support/paths.js';

const worker = (args: string[], env: Record<string, string>) =>
  spawnSync(process.execPath, [CLI_MAIN, 'worker', ...args], {
    encoding: 'utf8',
    env: { ...process.env, REDIS_URL: '', ...env },
    timeout: 15_000,
  });

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
    const c = worker(['--concurrency', 'many'], { REDIS_URL: 'redis://127.0.0.1:1' });
    expect(c.status).toBe(2);
    expect(c.stderr).toContain('--concurrency takes a whole number of at least 1 (got many)');
  });

  it('exits 1 when Redis does not answer', () => {
    const r = worker(['--redis', 'redis://127.0.0.1:1'], {});
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('does not answer');
  });
});
