/**
 * Schedules and events on a Redis deployment with real worker processes: a schedule fires one run
 * per tick however many workers run; a tick missed while every worker was down runs once; the
 * schedules a directive declares are registered by the workers; an event starts each subscribed
 * directive once per event id.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QueueName } from '../../src/redis/queue-names.js';
import { RedisRunStore } from '../../src/redis/run-store/redis-run-store.js';
import { ScheduleBook } from '../../src/redis/triggers/schedule-book.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentProcesses, until } from '../support/dirigent-processes.js';
import { redisForTest } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';

const redis = redisForTest();
const processes = dirigentProcesses();
let project: string;

beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-sched-'));
  mkdirSync(join(project, '.ai', 'directives'), { recursive: true });
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

const env = () => ({ ...process.env, REDIS_URL: redis.url, DIRIGENT_PREFIX: redis.prefix });
const cli = (...args: string[]) => processes.cli(env(), ...args, '--project', project);
const directive = (name: string, xml: string) =>
  writeDirective(join(project, '.ai', 'directives'), name, xml);
const lines = (file: string) =>
  existsSync(join(project, file))
    ? readFileSync(join(project, file), 'utf8').trim().split('\n')
    : [];

/** A directive whose every run appends its input `label` to ticks.log. */
const ticker = `<inputs><input name="label" type="string" default="tick"/></inputs>
  <process><step name="log"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo {input:label} >> ticks.log"/></execute></step></process>`;

/** The stored runs of directive `name`, newest first. */
function runsOf(name: string): Promise<{ runId: string; status: string }[]> {
  return new RedisRunStore(redis.redis, { prefix: redis.prefix }).list({
    directive: name,
    limit: 1000,
  });
}

/** The trigger jobs not done yet: due (waiting), under way (active), or due later (delayed). */
async function pendingTriggers(): Promise<{ waiting: number; active: number; delayed: number }> {
  const queue = new Queue(QueueName.TRIGGERS, { connection: redis.redis, prefix: redis.prefix });
  try {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    return {
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      active: counts.active ?? 0,
      delayed: counts.delayed ?? 0,
    };
  } finally {
    await queue.close();
  }
}

/** Resolves once every stored run of `directive` has ended; resolves with them. */
async function allEnded(directive: string) {
  let runs: { status: string }[] = [];
  await waitFor(
    async () => {
      runs = await runsOf(directive);
      return runs.every((r) => !['queued', 'running'].includes(r.status));
    },
    { what: `every run of ${directive} to end` },
  );
  return runs;
}

describe('schedules', { timeout: 60_000 }, () => {
  it('fires one run per tick with three workers, and stops when removed', async () => {
    directive('tick', ticker);
    await Promise.all([1, 2, 3].map(() => processes.worker(env(), '--project', project)));
    // Ticks are counted from before the schedule exists to after it is removed.
    const from = Date.now();
    const added = await cli(
      'schedule',
      'add',
      'tick',
      '--cron',
      '* * * * * *',
      '--id',
      'every-second',
      '--json',
    );
    expect(added.code, added.stdout + added.stderr).toBe(0);
    const listed = await cli('schedule', 'list', '--json');
    expect(JSON.parse(listed.stdout)).toMatchObject([
      { id: 'every-second', directive: 'tick', cron: '* * * * * *' },
    ]);
    await until(() => lines('ticks.log').length >= 3, 10_000, 'three ticks');
    expect((await cli('schedule', 'remove', 'every-second')).code).toBe(0);
    const seconds = (Date.now() - from) / 1000;
    // Removed, the schedule leaves no tick to come; the ticks on their way start their runs.
    await waitFor(
      async () => {
        const pending = await pendingTriggers();
        return pending.waiting + pending.active + pending.delayed === 0;
      },
      { what: 'the trigger jobs on their way' },
    );
    await allEnded('tick');
    const runs = await runsOf('tick');
    // One run per tick: as many as seconds went by (not three per tick), each run once.
    expect(runs.length).toBeLessThanOrEqual(Math.ceil(seconds) + 2);
    expect(lines('ticks.log')).toHaveLength(runs.length);
    expect(new Set(runs.map((r) => r.runId)).size).toBe(runs.length);
    expect(await new ScheduleBook(redis.redis, redis.prefix).list()).toEqual([]);
  });

  it('runs a tick missed while every worker was down once, not once per tick missed', async () => {
    directive('tick', ticker);
    expect((await cli('schedule', 'add', 'tick', '--cron', '* * * * * *', '--id', 's')).code).toBe(
      0,
    );
    const book = new ScheduleBook(redis.redis, redis.prefix);
    const [schedule] = await book.list();
    const next = schedule!.next!;
    // Time passing is what this is about: nobody serves while the tick due at `next` and the two
    // after it go by.
    await waitFor(() => Date.now() > next + 2_100, { what: 'three ticks with nobody serving' });
    const worker = await processes.worker(env(), '--project', project);
    const startedAt = Date.now();
    await until(() => lines('ticks.log').length >= 1, 10_000, 'the first run');
    // The backlog taken: no trigger job left but the next tick's.
    await waitFor(
      async () => {
        const pending = await pendingTriggers();
        return pending.waiting + pending.active === 0;
      },
      { what: 'the trigger jobs due to be taken' },
    );
    const exited = new Promise((r) => worker.once('exit', r));
    worker.kill('SIGTERM');
    await exited;
    const served = Date.now() - startedAt;
    await cli('schedule', 'remove', 's');
    // The backlog ran once; at most one more tick came while the worker served.
    const runs = await runsOf('tick');
    expect(runs.length).toBeLessThanOrEqual(2 + Math.floor(served / 1000));
    expect(lines('ticks.log').length).toBeLessThanOrEqual(runs.length);
  });

  it("registers the schedules a directive declares when workers start, with the schedule's inputs", async () => {
    directive(
      'nightly',
      ticker.replace(
        '<inputs>',
        '<metadata><schedule cron="* * * * * *" name="fast"><input name="label">declared</input></schedule></metadata><inputs>',
      ),
    );
    await processes.worker(env(), '--project', project);
    await until(() => lines('ticks.log').includes('declared'), 10_000, 'a declared tick');
    const listed = JSON.parse((await cli('schedule', 'list', '--json')).stdout) as { id: string }[];
    expect(listed.map((s) => s.id)).toEqual(['directive:nightly#fast']);
    // Declared schedules follow the project: gone from it, gone from the deployment.
    rmSync(join(project, '.ai', 'directives', 'nightly.md'));
    const synced = JSON.parse((await cli('schedule', 'sync', '--json')).stdout) as {
      removed: string[];
    };
    expect(synced.removed).toEqual(['directive:nightly#fast']);
  });

  it('refuses schedules it could never run, before adding them', async () => {
    directive('tick', ticker);
    const badCron = await cli('schedule', 'add', 'tick', '--cron', 'every day', '--json');
    expect(badCron.code).toBe(2);
    expect(JSON.parse(badCron.stdout).error.code).toBe('INVALID_REQUEST');
    const badInput = await cli(
      'schedule',
      'add',
      'tick',
      '--cron',
      '0 3 * * *',
      '--input',
      'nope=1',
      '--json',
    );
    expect(JSON.parse(badInput.stdout).error.code).toBe('INVALID_INPUTS');
    const embedded = await processes.cli(
      { ...process.env, REDIS_URL: '' },
      'schedule',
      'list',
      '--json',
      '--project',
      project,
    );
    expect(JSON.parse(embedded.stdout).error.code).toBe('NEEDS_REDIS');
  });
});

describe('events', { timeout: 60_000 }, () => {
  const subscriber = (name: string) =>
    directive(
      name,
      `<metadata><on event="order.created"/></metadata>
      <inputs><input name="event" type="object"/></inputs>
      <process><step name="log"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo ${name} \${inputs.event.id} >> events.log"/></execute></step></process>`,
    );

  it('starts each subscribed directive once per event id, on Redis', async () => {
    subscriber('bill');
    subscriber('ship');
    directive('other', ticker);
    await processes.worker(env(), '--project', project);
    for (let i = 0; i < 3; i++) {
      const r = await cli(
        'emit',
        'order.created',
        '--payload',
        '{"id": 7}',
        '--id',
        'evt-7',
        '--json',
      );
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const emitted = JSON.parse(r.stdout) as { runs: { directive: string; created: boolean }[] };
      expect(emitted.runs.map((x) => [x.directive, x.created])).toEqual([
        ['bill', i === 0],
        ['ship', i === 0],
      ]);
    }
    // Each emit created its runs, or found them: once both have ended, nothing more writes.
    const ended = [...(await allEnded('bill')), ...(await allEnded('ship'))];
    expect(ended.map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(lines('events.log').sort()).toEqual(['bill 7', 'ship 7']);
  });

  it('works embedded too, and says when no directive runs on an event', async () => {
    subscriber('bill');
    const noRedis = { ...process.env, REDIS_URL: '' };
    const r = await processes.cli(
      noRedis,
      'emit',
      'order.created',
      '--payload',
      '{"id": 1}',
      '--project',
      project,
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(lines('events.log')).toEqual(['bill 1']);
    const none = await processes.cli(noRedis, 'emit', 'nobody.listens', '--project', project);
    expect(none.stdout).toContain('no directive runs on it');
  });
});
