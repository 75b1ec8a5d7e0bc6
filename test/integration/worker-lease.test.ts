/**
 * Workers' leases on Redis (`redis/takeover/worker-lease.ts`, `lease-renewer.ts`): renewed
 * together for one process, a dead worker's lease looked at the moment it lapses, a worker told
 * when its own lease lapsed, a worker whose event loop is held up a while not taken for dead, and
 * a Redis that was away (or every worker held up at once) not taken for every worker dead.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_WORKER_LEASE_MS,
  WorkerLease,
  workersKey,
  type WorkerLeaseOptions,
} from '../../src/redis/takeover/worker-lease.js';
import { renewEveryMs } from '../../src/redis/takeover/lease-renewer.js';
import { redisForTest } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';

const t = redisForTest();

/** Gives `name` a lease that lapses in `ms` (negative: lapsed already), as another worker would. */
const lease = (name: string, ms: number) =>
  t.redis.zadd(workersKey(t.prefix), Date.now() + ms, name);

/** When the lease `name` lapses (epoch ms), or `undefined` when it has none. */
async function lapsesAt(name: string): Promise<number | undefined> {
  const score = await t.redis.zscore(workersKey(t.prefix), name);
  return score === null ? undefined : Number(score);
}

const opened: WorkerLease[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.close()));
});

/** A lease of `names` on the test's connection that must not be lost, unless `onLost` says. */
function workerLease(options: Partial<WorkerLeaseOptions> & { names: string[] }): WorkerLease {
  const l = new WorkerLease({
    redis: t.redis,
    prefix: t.prefix,
    onLost: () => {
      throw new Error('not lost');
    },
    onLapsed: async () => {},
    ...options,
  });
  opened.push(l);
  return l;
}

/** Holds this process's event loop for `ms`, as a long synchronous task would. */
function holdEventLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: no timer, no reply is handled meanwhile
  }
}

describe('worker leases', () => {
  it('renews its lease, reports lapsed ones of others, and gives its own up on close', async () => {
    const lapsed: string[][] = [];
    await lease('tools/dead', -1);
    const l = workerLease({
      names: ['runs/live'],
      leaseMs: 600,
      onLapsed: async (names) => void lapsed.push(names),
    });
    const joined = await waitFor(() => lapsesAt('runs/live'), { what: 'the lease to be taken' });
    await waitFor(async () => (await lapsesAt('runs/live'))! > joined, {
      what: 'a renewal of the lease',
    });
    expect(await lapsesAt('runs/live')).toBeGreaterThan(Date.now());
    await waitFor(() => lapsed.length > 0, { what: 'the lapsed lease reported' });
    expect(lapsed[0]).toEqual(['tools/dead']);
    await l.close();
    expect(await lapsesAt('runs/live')).toBeUndefined();
  });

  it('renews the leases of one connection (a run worker and a tool worker of one process) by one script', async () => {
    workerLease({ names: ['runs/a'], leaseMs: 900 });
    workerLease({ names: ['tools/a'], leaseMs: 900 });
    // Renewed by one script, both lapse at the same moment.
    const first = await waitFor(
      async () => {
        const [runs, tools] = [await lapsesAt('runs/a'), await lapsesAt('tools/a')];
        return runs !== undefined && runs === tools && runs;
      },
      { what: 'both leases renewed together' },
    );
    await waitFor(async () => (await lapsesAt('runs/a'))! > first, { what: 'the next renewal' });
    expect(await lapsesAt('tools/a')).toBe(await lapsesAt('runs/a'));
  });

  it("looks at another worker's lease when it lapses, not at its next renewal", async () => {
    // A lease of a minute is renewed every 10 s: a fixed poll would find the other lease lapsed
    // only then.
    expect(renewEveryMs(60_000)).toBe(10_000);
    await lease('tools/dying', 300);
    const lapsesAtMs = (await lapsesAt('tools/dying'))!;
    let reportedAt = 0;
    workerLease({
      names: ['runs/watching'],
      leaseMs: 60_000,
      onLapsed: async (names) => {
        if (names.includes('tools/dying')) reportedAt ||= Date.now();
      },
    });
    await waitFor(() => reportedAt, { what: 'the lapsed lease reported', timeoutMs: 5000 });
    expect(reportedAt).toBeGreaterThanOrEqual(lapsesAtMs);
    expect(reportedAt - lapsesAtMs).toBeLessThan(2000);
  });

  it('says only the lease that was lost is lost, when leases are renewed together', async () => {
    let runsLost = 0;
    workerLease({ names: ['runs/b'], leaseMs: 900 });
    workerLease({ names: ['tools/b'], leaseMs: 900, onLost: () => void runsLost++ });
    await waitFor(async () => (await lapsesAt('tools/b')) && (await lapsesAt('runs/b')), {
      what: 'both leases taken',
    });
    await t.redis.zrem(workersKey(t.prefix), 'tools/b'); // another worker reaped it
    await waitFor(() => runsLost > 0, { what: 'the next renewal to find the lease gone' });
    expect(runsLost).toBe(1);
    expect(await lapsesAt('tools/b')).toBeGreaterThan(Date.now()); // a fresh lease from now on
  });

  it('says it was lost when its lease was taken over meanwhile (the worker was paused)', async () => {
    let lost = 0;
    workerLease({ names: ['runs/paused'], leaseMs: 900, onLost: () => void lost++ });
    await waitFor(() => lapsesAt('runs/paused'), { what: 'the lease to be taken' });
    await t.redis.zrem(workersKey(t.prefix), 'runs/paused'); // another worker reaped it
    await waitFor(() => lost > 0, { what: 'the next renewal to find the lease gone' });
    expect(lost).toBe(1);
  });

  it('says it was lost when its lease lapsed, even before anyone reaped it', async () => {
    // Another worker renews on time, so Redis was not away; this one's lease lapsed.
    workerLease({ names: ['runs/other'], leaseMs: 900 });
    let lost = 0;
    const l = new WorkerLease({
      redis: t.connect(),
      prefix: t.prefix,
      names: ['runs/late'],
      leaseMs: 900,
      onLost: () => void lost++,
      onLapsed: async () => {},
    });
    opened.push(l);
    await waitFor(() => lapsesAt('runs/late'), { what: 'the lease to be taken' });
    await lease('runs/late', -1);
    await waitFor(() => lost > 0, { what: 'the next renewal to find the lease lapsed' });
    expect(lost).toBe(1);
  });

  it('keeps the lease of a worker whose event loop is held up for a second (the default lease)', async () => {
    let lost = 0;
    const l = workerLease({ names: ['runs/busy'], onLost: () => void lost++ });
    expect(l.leaseMs).toBe(DEFAULT_WORKER_LEASE_MS);
    const before = await waitFor(() => lapsesAt('runs/busy'), { what: 'the lease to be taken' });
    holdEventLoop(1000);
    await waitFor(async () => (await lapsesAt('runs/busy'))! > before + 1000, {
      what: 'a renewal after the hold',
    });
    expect(l.confirm()).toBe(true);
    expect(lost).toBe(0);
  });

  it('takes no worker for dead when every worker fell silent for a whole lease (Redis away, or every worker held up)', async () => {
    await lease('runs/died-before', -2500);
    await lease('runs/stalled-too', -200);
    // The last renewal anyone made was 2 s ago (more than this lease of 1.5 s), when the other
    // lease had 1.8 s left: it has them again. One that lapsed before is not spared.
    await t.redis.set(`${workersKey(t.prefix)}:renewed`, Date.now() - 2000);
    const lapsed: string[][] = [];
    workerLease({
      names: ['runs/first-back'],
      onLapsed: async (names) => void lapsed.push(names),
    });
    await waitFor(() => lapsesAt('runs/first-back'), { what: 'the first renewal' });
    expect(await lapsesAt('runs/stalled-too')).toBeGreaterThan(Date.now());
    await waitFor(() => lapsed.length > 0, { what: 'the lease that lapsed before reported' });
    expect(lapsed[0]).toEqual(['runs/died-before']);
  });

  it('takes a Redis that nobody reached for a whole lease for a restart, not for every worker dead', async () => {
    const lapsed: string[][] = [];
    // The last renewal anyone made was a minute ago, when the other worker's lease had 0.6 s
    // left: Redis was away since.
    const longAgo = Date.now() - 60_000;
    await lease('runs/other', -60_000 + 600);
    await t.redis.set(`${workersKey(t.prefix)}:renewed`, longAgo);
    const l = workerLease({
      names: ['runs/back'],
      leaseMs: 600,
      onLapsed: async (names) => void lapsed.push(names),
    });
    await waitFor(
      async () => Number(await t.redis.get(`${workersKey(t.prefix)}:renewed`)) > longAgo,
      { what: 'the first renewal' },
    );
    expect(await lapsesAt('runs/other')).toBeGreaterThan(Date.now());
    expect(lapsed).toEqual([]);
    // The other worker never renews: the 0.6 s it had left later, its lease lapses.
    await waitFor(() => lapsed.length > 0, { what: "the other worker's lease to lapse" });
    await l.close();
    expect(lapsed[0]).toEqual(['runs/other']);
  });
});
