/** A worker's lease, job lock and slot wait, from its options and environment (`worker/worker-options.ts`). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { compileWorkerOptions } from '../../../src/worker/worker-options.js';
import { thrown } from '../../support/thrown.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function compile(env: Record<string, string>) {
  const project = mkdtempSync(join(tmpdir(), 'dirigent-worker-timings-'));
  dirs.push(project);
  return compileWorkerOptions({ redis: 'redis://127.0.0.1:6379', project, env });
}

describe("a worker's lease and job lock", () => {
  it('are 1.5 s and 30 s by default, an empty setting included', () => {
    expect(compile({})).toMatchObject({ leaseMs: 1500, timing: { lockMs: 30_000 } });
    expect(compile({ DIRIGENT_WORKER_LEASE_MS: '', DIRIGENT_LOCK_MS: ' ' })).toMatchObject({
      leaseMs: 1500,
      timing: { lockMs: 30_000 },
    });
  });

  it('are what DIRIGENT_WORKER_LEASE_MS and DIRIGENT_LOCK_MS say', () => {
    expect(compile({ DIRIGENT_WORKER_LEASE_MS: '300', DIRIGENT_LOCK_MS: '2000' })).toMatchObject({
      leaseMs: 300,
      timing: { lockMs: 2000 },
    });
  });

  it('refuse a setting that is not a whole number of ms, or too short, naming it', () => {
    for (const [name, text] of [
      ['DIRIGENT_WORKER_LEASE_MS', '299'],
      ['DIRIGENT_WORKER_LEASE_MS', '1.5s'],
      ['DIRIGENT_WORKER_LEASE_MS', '1500.5'],
      ['DIRIGENT_LOCK_MS', '100'],
      ['DIRIGENT_LOCK_MS', 'thirty'],
    ] as const) {
      const err = thrown(() => compile({ [name]: text }));
      expect(err).toMatchObject({ code: 'INVALID_REQUEST', details: { option: name, got: text } });
      expect(String((err as Error).message)).toContain(name);
    }
  });
});

describe('how long a call the worker would run itself waits for a tool slot', () => {
  it('is 100 ms by default, and what DIRIGENT_SLOT_WAIT_MS says, 0 (not at all) included', () => {
    expect(compile({}).slotWaitMs).toBe(100);
    expect(compile({ DIRIGENT_SLOT_WAIT_MS: '0' }).slotWaitMs).toBe(0);
    expect(compile({ DIRIGENT_SLOT_WAIT_MS: '250' }).slotWaitMs).toBe(250);
  });

  it('is the slotWaitMs given, which must be a whole number of ms too', () => {
    const project = mkdtempSync(join(tmpdir(), 'dirigent-worker-timings-'));
    dirs.push(project);
    const options = { redis: 'redis://127.0.0.1:6379', project, env: {} };
    expect(compileWorkerOptions({ ...options, slotWaitMs: 0 }).slotWaitMs).toBe(0);
    expect(thrown(() => compileWorkerOptions({ ...options, slotWaitMs: -5 }))).toMatchObject({
      code: 'INVALID_REQUEST',
      details: { option: 'slotWaitMs', got: '-5' },
    });
  });

  it('refuses a setting that is not a whole number of ms, naming it', () => {
    for (const text of ['-1', '0.5', 'soon']) {
      const err = thrown(() => compile({ DIRIGENT_SLOT_WAIT_MS: text }));
      expect(err).toMatchObject({
        code: 'INVALID_REQUEST',
        details: { option: 'DIRIGENT_SLOT_WAIT_MS', got: text },
      });
    }
  });
});
