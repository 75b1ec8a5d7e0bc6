/**
 * A run's event feed as Redis keeps it: a list of the run's events counted in its hash, so that
 * event n has id n; a consumer that comes back after an id the feed no longer holds (trimmed, or
 * never there) gets the run's record first, and a feed followed from its start is one of a run
 * that exists.
 */
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Dirigent } from '../../src/operations/dirigent.js';
import { RedisRunStore } from '../../src/redis/run-store/redis-run-store.js';
import type { RunFeedEvent } from '../../src/run-backend/run-feed-event.js';
import { writeDirective } from '../support/directive-file.js';
import { inProcessWorker } from '../support/in-process-worker.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();

let project: string;
let dirigent: Dirigent;
let worker: ReturnType<typeof inProcessWorker>;

beforeEach(async () => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-feed-'));
  const directives = join(project, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeDirective(
    directives,
    'three',
    `<process>
      <step name="a"><render>a</render></step>
      <step name="b"><render>b</render></step>
      <step name="c"><render>c</render></step>
    </process>`,
  );
  worker = inProcessWorker(redis, { projectDir: project });
  dirigent = await Dirigent.open({ project, redis: redis.url, prefix: redis.prefix });
});

afterEach(async () => {
  await dirigent.close();
  await worker.close();
  rmSync(project, { recursive: true, force: true });
});

async function all(runId: string, after?: string): Promise<RunFeedEvent[]> {
  const events: RunFeedEvent[] = [];
  for await (const e of await dirigent.watch(runId, after === undefined ? {} : { after }))
    events.push(e);
  return events;
}

describe("a run's feed on Redis", () => {
  it('numbers the events from 1, in the order they were written with the state', async () => {
    const run = await dirigent.start({ directive: 'three' });
    await run.result();
    const events = await all(run.runId, '0');
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i + 1)));
    expect(events.map((e) => e.type)).toEqual([
      'run.started',
      ...['step.started', 'step.ended', 'step.started', 'step.ended', 'step.started', 'step.ended'],
      'run.ended',
    ]);
    // The record read with the feed stands at its last event.
    const store = new RedisRunStore(redis.redis, { prefix: redis.prefix });
    expect((await store.readFollowed(run.runId))!.position).toBe(String(events.length));
    // Resumed after its last but one: the last alone.
    expect((await all(run.runId, String(events.length - 1))).map((e) => e.type)).toEqual([
      'run.ended',
    ]);
  });

  it('gives the record first to a consumer whose next event the feed no longer holds', async () => {
    const run = await dirigent.start({ directive: 'three' });
    await run.result();
    const store = new RedisRunStore(redis.redis, { prefix: redis.prefix });
    // As a long run's feed is trimmed: only the last two events are kept.
    await redis.redis.ltrim(store.feedKey(run.runId), -2, -1);
    const trimmed = await all(run.runId, '1');
    expect(trimmed.map((e) => e.type)).toEqual(['run.state']);
    expect(trimmed[0]).toMatchObject({ id: '8', record: { status: 'completed' } });
    // An id past the last event, or not an id at all: the record too.
    expect((await all(run.runId, '99')).map((e) => e.type)).toEqual(['run.state']);
    expect((await all(run.runId, 'x-1')).map((e) => e.type)).toEqual(['run.state']);
  });

  it('refuses to follow from its start a run that does not exist', async () => {
    await expect(
      dirigent.watch('7d1f5e8a-0000-4000-8000-000000000000', { after: '0' }),
    ).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
  });
});
