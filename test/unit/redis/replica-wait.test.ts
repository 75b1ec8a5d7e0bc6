/** When a store waits for replicas (`redis/run-store/replica-wait.ts`). */
import { describe, expect, it } from 'vitest';
import { recordsAnEnd, replicaWaitOf } from '../../../src/redis/run-store/replica-wait.js';
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
