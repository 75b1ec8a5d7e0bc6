import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Files whose assertions depend on time: they kill or pause worker processes and wait for others
 * to take over within a lease (a takeover within 3 s of a 1.5 s lease), count a lease's renewals,
 * or let one lapse. They run after the other files, two at a time, so that no other test's load
 * delays them: most of their time is spent waiting for leases and tools, not on a core.
 */
const TIMING = [
  'test/integration/distributed.test.ts',
  'test/integration/distributed-parked.test.ts',
  'test/integration/takeover.test.ts',
  'test/integration/telemetry.test.ts',
  'test/integration/bootstrap.test.ts',
  'test/integration/run-claims.test.ts',
  'test/integration/worker-lease.test.ts',
  'test/integration/lapsed-lease.test.ts',
];

/**
 * Files that bound a latency closely or load the machine themselves: the chaos run (three
 * workers and a Redis of its own, killed and restarted, every takeover within 5 s) and health
 * checks answered within 100 ms while runs keep a core busy (api-serve). They run last, alone.
 */
const ALONE = ['test/integration/chaos.test.ts', 'test/integration/api-serve.test.ts'];

/**
 * The distributed suite, run a second time on a Redis Cluster of its own (three primaries on
 * loopback ports, started by `test/support/cluster-setup.ts`): every script and transaction must
 * keep to one hash slot, and the deployment must behave as on one Redis.
 */
const ON_CLUSTER = [
  'test/integration/distributed.test.ts',
  'test/integration/distributed-parked.test.ts',
  // takeover.test.ts is held back: on the cluster, a worker paused past its lease (SIGSTOP) and
  // then told to stop sometimes never drains (about one run in four); see docs/scaling.md.
  'test/integration/run-claims.test.ts',
  'test/integration/worker-lease.test.ts',
  'test/integration/eager-calls.test.ts',
  'test/integration/start-groups.test.ts',
  'test/integration/locks.test.ts',
  'test/integration/schedules-events.test.ts',
  'test/integration/batch.test.ts',
  'test/integration/queue-trigger.test.ts',
  'test/integration/api-runs.test.ts',
  'test/integration/redis-run-store.test.ts',
  'test/integration/result-inbox.test.ts',
  'test/integration/run-feed-redis.test.ts',
  'test/integration/concurrency-keys.test.ts',
  'test/integration/pause.test.ts',
  'test/integration/redrive.test.ts',
  'test/integration/bulk-actions.test.ts',
  'test/integration/idempotency-reuse.test.ts',
  'test/integration/run-priority.test.ts',
  'test/integration/shards.test.ts',
  'test/integration/cluster.test.ts',
];

/** What holds on a Redis Cluster alone: run only by the `cluster` project. */
const CLUSTER_ONLY = ['test/integration/cluster.test.ts'];

/** The console's browser tests: their project makes sure Chromium is installed first. */
const CONSOLE = ['test/e2e/console.test.ts', 'test/e2e/console-operate.test.ts'];

/**
 * Test files at once in the first group. Every file keeps to Redis keys of its own (a fresh
 * prefix per test, see test/support/redis.ts), temporary folders and ports of its own, and most
 * of a file's time is spent waiting on processes and Redis rather than on a core: four at once
 * keep two cores busy. `DIRIGENT_TEST_WORKERS` overrides it.
 */
const PARALLEL = Number(process.env.DIRIGENT_TEST_WORKERS) || 4;

export default defineConfig({
  test: {
    testTimeout: 20_000,
    pool: 'forks',
    // Under CI a JSON report lets .ci/run print a one-line "N passed, N failed" summary.
    reporters: process.env.CI
      ? ['default', ['json', { outputFile: '.vitest-report.json' }]]
      : ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...TIMING, ...ALONE, ...CONSOLE, ...CLUSTER_ONLY],
          maxWorkers: PARALLEL,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'console',
          include: CONSOLE,
          globalSetup: ['scripts/ensure-chromium.mjs'],
          maxWorkers: PARALLEL,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'timing',
          include: TIMING,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: {
          name: 'cluster',
          include: ON_CLUSTER,
          globalSetup: ['test/support/cluster-setup.ts'],
          // One file at a time: its timing files bound takeovers within a lease, as on one Redis,
          // and the three nodes already share the cores with the workers.
          maxWorkers: 1,
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
