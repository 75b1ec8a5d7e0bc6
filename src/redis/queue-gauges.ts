/**
 * The gauges a worker reports when it exports metrics: jobs per queue and state
 * (`dirigent.queue.jobs`) and stored runs per status (`dirigent.run.count`), read from Redis when
 * a reader collects (a Prometheus scrape, an OTLP export), not on a timer of their own. They
 * describe the whole deployment, every shard of it, so every worker reports the same figures:
 * chart them with `max`, not `sum`.
 */
import { quiet } from './redis-connection.js';
import type { BatchObservableCallback, Meter } from '@opentelemetry/api';
import { Queue } from 'bullmq';
import type { RedisClient } from './redis-client.js';
import { Attr, Metric } from '../telemetry/attributes.js';
import { QueueName } from './queue-names.js';
import { queueOptions } from './queue-options.js';
import { RedisRunStore } from './run-store/redis-run-store.js';
import type { ShardLayout } from './shards/shard-layout.js';

const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed'] as const;
const RUN_STATUSES = ['running', 'waiting', 'paused', 'completed', 'failed', 'cancelled'] as const;

/** Registers the gauges, summed over every shard of `layout`; `close()` stops them. */
export function observeQueues(
  meter: Meter,
  redis: RedisClient,
  layout: ShardLayout,
): { close(): Promise<void> } {
  // The runs and tools queues of every shard; the trigger queue lives beside the shards.
  const queues = [
    ...layout.prefixes.flatMap((prefix) =>
      [QueueName.RUNS, QueueName.TOOLS].map((name) =>
        quiet(new Queue(name, queueOptions(redis, prefix))),
      ),
    ),
    quiet(new Queue(QueueName.TRIGGERS, queueOptions(redis, layout.home))),
  ];
  const stores = layout.prefixes.map((prefix) => new RedisRunStore(redis, { prefix }));
  const jobs = meter.createObservableGauge(Metric.QUEUE_JOBS, {
    description: 'Jobs per queue and state.',
  });
  const runs = meter.createObservableGauge(Metric.RUN_COUNT, {
    description: 'Runs kept in the store, per status.',
  });
  const observe: BatchObservableCallback = async (result) => {
    const [counts, sizes] = await Promise.all([
      Promise.all(queues.map((q) => q.getJobCounts(...JOB_STATES))),
      Promise.all(
        RUN_STATUSES.map(async (status) => {
          const each = await Promise.all(stores.map((s) => redis.zcard(s.indexKey({ status }))));
          return each.reduce((a, b) => a + b, 0);
        }),
      ),
    ]);
    const byQueue = new Map<string, Record<string, number>>();
    for (const [i, q] of queues.entries()) {
      const sum = byQueue.get(q.name) ?? {};
      for (const state of JOB_STATES) sum[state] = (sum[state] ?? 0) + (counts[i]![state] ?? 0);
      byQueue.set(q.name, sum);
    }
    for (const [name, sum] of byQueue)
      for (const state of JOB_STATES)
        result.observe(jobs, sum[state] ?? 0, {
          [Attr.MESSAGING_DESTINATION]: name,
          [Attr.QUEUE_STATE]: state,
        });
    for (const [i, status] of RUN_STATUSES.entries())
      result.observe(runs, sizes[i]!, { [Attr.RUN_STATUS]: status });
  };
  meter.addBatchObservableCallback(observe, [jobs, runs]);
  return {
    async close() {
      meter.removeBatchObservableCallback(observe, [jobs, runs]);
      await Promise.all(queues.map((q) => q.close()));
    },
  };
}
