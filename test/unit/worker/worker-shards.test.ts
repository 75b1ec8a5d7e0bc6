/** The shards a worker serves, from its options and environment (`worker/worker-options.ts`). */
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

function compile(env: Record<string, string>, shardsServed?: number[]) {
  const project = mkdtempSync(join(tmpdir(), 'dirigent-worker-shards-'));
  dirs.push(project);
  return compileWorkerOptions({
    redis: 'redis://127.0.0.1:6379',
    project,
    env,
    ...(shardsServed && { shardsServed }),
  });
}

describe('the shards a worker serves', () => {
  it('are all of them by default, or those DIRIGENT_WORKER_SHARDS names', () => {
    expect(compile({ DIRIGENT_SHARDS: '4' }).shardsServed).toEqual([0, 1, 2, 3]);
    expect(
      compile({ DIRIGENT_SHARDS: '4', DIRIGENT_WORKER_SHARDS: '3, 1,1' }).shardsServed,
    ).toEqual([1, 3]);
    expect(compile({ DIRIGENT_SHARDS: '4' }, [2]).shardsServed).toEqual([2]);
    expect(compile({}).layout.prefixes).toEqual(['dirigent']);
  });

  it('refuses a shard the deployment does not have, or a list that is not numbers', () => {
    for (const list of ['4', 'a', '1,,2', '-1'])
      expect(
        thrown(() => compile({ DIRIGENT_SHARDS: '4', DIRIGENT_WORKER_SHARDS: list })),
      ).toMatchObject({ code: 'INVALID_REQUEST' });
    const err = thrown(() => compile({ DIRIGENT_SHARDS: '2' }, [5]));
    expect(err.message).toContain('shard numbers from 0 to 1');
    expect(thrown(() => compile({ DIRIGENT_SHARDS: '0' }))).toMatchObject({
      code: 'INVALID_CONFIG',
    });
  });
});
