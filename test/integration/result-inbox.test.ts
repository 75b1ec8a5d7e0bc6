/**
 * The result inbox: an outcome published by a worker settles the waiting call at once; one that
 * never arrives (a lost message) is found on the job itself; a job gone from the queue fails the
 * call with a retryable error instead of leaving it waiting for ever; a worker in the same process
 * hands an outcome over directly and learns when the enqueues it caused are done.
 */
import { Queue, Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { inboxChannel, ResultInbox } from '../../src/redis/result-inbox.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();

async function withInbox(work: (queue: Queue, inbox: ResultInbox) => Promise<void>): Promise<void> {
  const queue = new Queue('inbox-test', { connection: redis.redis, prefix: redis.prefix });
  const inbox = new ResultInbox(redis.redis, redis.prefix, queue);
  try {
    await inbox.whenReady();
    await work(queue, inbox);
  } finally {
    inbox.close();
    await queue.close();
  }
}

describe('ResultInbox', () => {
  it('settles a call with the outcome a worker publishes', async () => {
    await withInbox(async (_queue, inbox) => {
      const ok = expect(inbox.expect('job-1', 'tool t')).resolves.toEqual({ n: 1 });
      const failed = expect(inbox.expect('job-2', 'tool t')).rejects.toMatchObject({
        code: 'TOOL_FAILED',
        retryable: true,
      });
      const channel = inboxChannel(redis.prefix, inbox.id);
      await redis.redis.publish(
        channel,
        JSON.stringify({ jobId: 'job-1', ok: true, value: { n: 1 } }),
      );
      await redis.redis.publish(
        channel,
        JSON.stringify({
          jobId: 'job-2',
          ok: false,
          error: { name: 'DirigentError', code: 'TOOL_FAILED', message: 'no', retryable: true },
        }),
      );
      await Promise.all([ok, failed]);
    });
  });

  it('takes an outcome handed over in this process, and answers once the enqueue it caused is done', async () => {
    await withInbox(async (queue, inbox) => {
      expect(ResultInbox.inThisProcess(inbox.id)).toBe(inbox);
      const order: string[] = [];
      // The caller, as a run would: on the outcome, it enqueues the next job at once.
      const caller = inbox.expect('step-1', 'tool t').then((value) => {
        order.push(`settled ${JSON.stringify(value)}`);
        const add = queue.add('t', {}, { jobId: 'step-2' }).then(() => order.push('added'));
        inbox.track(add);
      });
      const handedOver = await inbox.handOver({ jobId: 'step-1', ok: true, value: { n: 1 } });
      order.push('handed over');
      await caller;
      expect(handedOver).toBe(true);
      expect(order).toEqual(['settled {"n":1}', 'added', 'handed over']);
      expect(await queue.getJobState('step-2')).toBe('waiting');
      // Nobody here waits for this job: the worker publishes its outcome instead.
      expect(await inbox.handOver({ jobId: 'other', ok: true, value: null })).toBe(false);
    });
    expect(ResultInbox.inThisProcess('no-such-inbox')).toBeUndefined();
  });

  it('hands over a failure as the error the caller would have read from a message', async () => {
    await withInbox(async (_queue, inbox) => {
      const call = expect(inbox.expect('job-f', 'tool t')).rejects.toMatchObject({
        code: 'TOOL_FAILED',
        retryable: false,
      });
      await inbox.handOver({
        jobId: 'job-f',
        ok: false,
        error: { code: 'TOOL_FAILED', message: 'no', retryable: false },
      });
      await call;
    });
  });

  it('finds the outcome on the job when no message comes', async () => {
    await withInbox(async (queue, inbox) => {
      const worker = new Worker('inbox-test', async () => ({ done: true }), {
        connection: redis.connect(),
        prefix: redis.prefix,
      });
      try {
        const outcome = inbox.expect('silent', 'tool t');
        await queue.add('t', {}, { jobId: 'silent' });
        await expect(outcome).resolves.toEqual({ done: true });
      } finally {
        await worker.close();
      }
    });
  });

  it('fails a call whose job is gone, with a retryable error', async () => {
    await withInbox(async (queue, inbox) => {
      const outcome = inbox.expect('vanished', 'tool t');
      const job = await queue.add('t', {}, { jobId: 'vanished' });
      await job.remove();
      await expect(outcome).rejects.toMatchObject({
        code: 'INTERNAL',
        retryable: true,
        message: expect.stringContaining('was lost'),
      });
    });
  });
});
