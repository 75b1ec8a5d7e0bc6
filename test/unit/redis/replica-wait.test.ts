/** When a store waits for replicas (`redis/run-store/replica-wait.ts`). */
import { describe, expect, it, vi } from 'vitest';
import {
  recordsAnEnd,
  REPLICA_RETRY_MS,
  ReplicaWaiter,
  replicaWaitOf,
} from '../../../src/redis/run-store/replica-wait.js';
import { thrown } from '../../support/thrown.js';

describe('the replica wait of a deployment', () => {
  it('waits for one replica on Sentinel and for none on one Redis, unless told otherwise', () => {
    expect(replicaWaitOf('sentinel', {})).toEqual({ replicas: 1, timeoutMs: 1000 });
    expect(replicaWaitOf('single', {})).toBeUndefined();
    expect(replicaWaitOf('sentinel', { DIRIGENT_REPLICA_WAIT: '0' })).toBeUndefined();
    expect(
      replicaWaitOf('single', { DIRIGENT_REPLICA_WAIT: '2', DIRIGENT_REPLICA_WAIT_MS: '250' }),
    ).toEqual({ replicas: 2, timeoutMs: 250 });
    expect(replicaWaitOf('cluster', {})).toBeUndefined();
  });

  it('is refused on a Redis Cluster, where WAIT cannot reach a shard’s primary', () => {
    expect(thrown(() => replicaWaitOf('cluster', { DIRIGENT_REPLICA_WAIT: '1' }))).toMatchObject({
      code: 'INVALID_CONFIG',
    });
  });
});

describe('a save that records an end', () => {
  it('is one that tells of a step’s or the run’s end, or writes step records alone', () => {
    expect(recordsAnEnd('diff', ['-{"type":"step.ended","runId":"r"}'])).toBe(true);
    expect(recordsAnEnd('full', ['-{"type":"run.ended","runId":"r"}'])).toBe(true);
    expect(recordsAnEnd('steps', undefined)).toBe(true);
    expect(recordsAnEnd('diff', ['-{"type":"step.started","runId":"r"}'])).toBe(false);
    expect(recordsAnEnd('diff', undefined)).toBe(false);
  });
});

describe('a store waiting for replicas', () => {
  it('sends no wait for a while after one timed out, and tells of it once', async () => {
    const sent: number[] = [];
    let answer = 0;
    const lagging: string[] = [];
    const waiter = new ReplicaWaiter(
      { replicas: 1, timeoutMs: 50, lagging: (runId) => lagging.push(runId) },
      {
        wait: async (replicas) => {
          sent.push(replicas);
          return answer;
        },
      },
    );
    await waiter.after('r1');
    await waiter.after('r2');
    expect(sent).toEqual([1]);
    expect(lagging).toEqual(['r1']);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + REPLICA_RETRY_MS + 1);
    answer = 1;
    await waiter.after('r3');
    await waiter.after('r4');
    expect(sent).toEqual([1, 1, 1]);
    expect(lagging).toEqual(['r1']);
    vi.useRealTimers();
  });
});
