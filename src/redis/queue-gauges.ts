/**
 * The gauges a worker reports when it exports metrics: jobs per queue and state
 * (`dirigent.queue.jobs`) and stored runs per status (`dirigent.run.count`), read from Redis when
 * a reader collects (a Prometheus scrape, an OTLP export), not on a timer of their own. They
 * describe the whole deployment, so every worker reports the same figures: chart them with `max`,
 * not `sum`.
 */
import type { BatchObservableCallback, Meter } from '@opentelemetry/api';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { Attr, Metric } from '../telemetry/attributes.js';
import { QueueName } from './queue-names.js';
import { queueOptions } from './queue-options.js';
import { RedisRunStore } from './run-store/redis-run-store.js';

const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed'] as const;
const RUN_STATUSES = ['running', 'waiting', 'paused', 'completed', 'failed', 'cancelled'] as const;

/** Registers the gauges; `close()` stops them and closes their queues. */
export function observeQueues(
  meter: Meter,
  redis: Redis,
  prefix: string,
): { close(): Promise<void> } {
  const queues = Object.values(QueueName).map(
    (name) => new Queue(name, queueOptions(redis, prefix)),
  );
  const store = new RedisRunStore(redis, { prefix });
  const jobs = meter.createObservableGauge(Metric.QUEUE_JOBS, {
    description: 'Jobs per queue and state.',
  });
  const runs = meter.createObservableGauge(Metric.RUN_COUNT, {
    description: 'Runs kept in the store, per status.',
  });
  const observe: BatchObservableCallback = async (result) => {
    const [counts, sizes] = await Promise.all([
      Promise.all(queues.map((q) => q.getJobCounts(...JOB_STATES))),
      Promise.all(RUN_STATUSES.map((status) => redis.zcard(store.indexKey({ status })))),
    ]);
    for (const [i, q] of queues.entries())
      for (const state of JOB_STATES)
        result.observe(jobs, counts[i]![state] ?? 0, {
          [Attr.MESSAGING_DESTINATION]: q.name,
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
