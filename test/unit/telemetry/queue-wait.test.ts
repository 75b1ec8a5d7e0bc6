/**
 * A job's queue wait: the time from its enqueueing (or its delay's end) to its take-up, as an
 * attribute of the job's span (`dirigent.queue.wait_ms`) and a point of `dirigent.queue.wait`. A
 * take-up stamped a moment before the enqueueing (a worker stamps the time it asked for a job,
 * which another process may enqueue just after) or before a delayed job's time (promoted early)
 * waited no time, and is recorded as such, never left out.
 */
import type { Job } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolJobSpan } from '../../../src/redis/job-spans.js';
import type { ToolJobData } from '../../../src/redis/tool-job.js';
import { Telemetry } from '../../../src/telemetry/telemetry.js';
import { memoryTelemetry } from '../../support/telemetry.js';

let telemetry: ReturnType<typeof memoryTelemetry>;
beforeEach(() => {
  telemetry = memoryTelemetry();
});
afterEach(() => telemetry.close());

/** The queue wait recorded for a tool job enqueued at `timestamp` and taken up at `processedOn`. */
async function queueWaitOf(job: { timestamp: number; processedOn: number; delay?: number }) {
  const fake = {
    id: 'job-1',
    timestamp: job.timestamp,
    processedOn: job.processedOn,
    opts: { ...(job.delay !== undefined && { delay: job.delay }) },
    data: { itemId: 'dirigent/util/echo', runId: 'r', step: 's', attempt: 1 },
  } as unknown as Job<ToolJobData>;
  const t = Telemetry.of(telemetry.options)!;
  ToolJobSpan.start(t, 'tools', fake)!.finish('completed');
  const [span] = telemetry.spans();
  expect(span!.name).toBe('tool dirigent/util/echo');
  expect(telemetry.spans().filter((s) => s.name === 'queue wait')).toEqual([]);
  const [point] = (await telemetry.metrics()).get('dirigent.queue.wait')!;
  expect(point!.attributes).toEqual({ 'messaging.destination.name': 'tools' });
  const seconds = (point!.value as { sum: number }).sum;
  expect(span!.attributes['dirigent.queue.wait_ms']).toBeCloseTo(seconds * 1000, 6);
  return span!.attributes['dirigent.queue.wait_ms'];
}

describe("a job's queue wait", () => {
  it('is the time from its enqueueing to its take-up', async () => {
    expect(await queueWaitOf({ timestamp: 1_000_000, processedOn: 1_000_250 })).toBeCloseTo(250, 0);
  });

  it('counts from the end of its delay', async () => {
    expect(
      await queueWaitOf({ timestamp: 1_000_000, processedOn: 1_000_900, delay: 500 }),
    ).toBeCloseTo(400, 0);
  });

  it('is none, and still recorded, for a take-up stamped before the enqueueing', async () => {
    expect(await queueWaitOf({ timestamp: 1_000_002, processedOn: 1_000_000 })).toBe(0);
  });

  it('is none, and still recorded, for a delayed job taken before its time', async () => {
    expect(await queueWaitOf({ timestamp: 1_000_000, processedOn: 1_000_100, delay: 500 })).toBe(0);
  });
});
