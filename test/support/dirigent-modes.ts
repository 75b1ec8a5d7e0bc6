/**
 * A `Dirigent` over a project, embedded or on the test's Redis with a worker in this process:
 * for specifications that hold in both modes. Everything opened is closed after each test, the
 * project folder removed with it.
 */
import { rmSync } from 'node:fs';
import { afterEach } from 'vitest';
import { Dirigent } from '../../src/operations/dirigent.js';
import { inProcessWorker } from './in-process-worker.js';
import type { redisForTest } from './redis.js';

/** The modes a specification runs in. */
export const MODES = ['embedded', 'redis'] as const;

/** One of {@link MODES}. */
export type Mode = (typeof MODES)[number];

/**
 * Opens Dirigent objects for the tests of one file: call at its top level, then `open(mode, dir)`
 * in a test, with a project folder of its own (removed after the test).
 */
export function dirigentModes(redis: ReturnType<typeof redisForTest>) {
  let cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c();
    cleanups = [];
  });
  return {
    async open(mode: Mode, dir: string): Promise<Dirigent> {
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      if (mode === 'redis') {
        const w = inProcessWorker(redis, { projectDir: dir });
        cleanups.push(() => w.close());
      }
      const dirigent = await Dirigent.open({
        project: dir,
        ...(mode === 'redis' && { redis: redis.url, prefix: redis.prefix }),
      });
      cleanups.push(() => dirigent.close());
      return dirigent;
    },
    /** Runs `cleanup` after the test, before the project is removed. */
    after(cleanup: () => Promise<void> | void): void {
      cleanups.push(cleanup);
    },
  };
}
