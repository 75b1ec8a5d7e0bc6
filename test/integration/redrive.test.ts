/**
 * Redrive: a run that failed or was cancelled goes on under the same id from the step that failed
 * (or the steps under way when it stopped). Steps that completed keep their results and do not
 * run again; the redriven step's attempts go on counting with its retries allowed again; the run's
 * time limit counts from the redrive; the record keeps each redrive. Embedded and on Redis (a
 * worker in this process) alike; a redrive through a worker killed with SIGKILL is in
 * `redrive-takeover.test.ts`.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Dirigent } from '../../src/operations/dirigent.js';
import type { RunFeedEvent } from '../../src/run-backend/run-feed-event.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentModes, MODES } from '../support/dirigent-modes.js';
import { redisForTest } from '../support/redis.js';
import { rejection } from '../support/thrown.js';

const redis = redisForTest();
const modes = dirigentModes(redis);

const bash = (name: string, command: string, inner = '') =>
  `<step name="${name}">${inner}<execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="${command}"/></execute></step>`;

/** Each step that does something writes a line to `effects`; `gate` fails until `open` exists. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-redrive-'));
  const directives = join(dir, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  const gate = bash(
    'gate',
    'echo gate >> effects; test -f open || { echo shut >&amp;2; exit 3; }',
    '<retry attempts="1"/>',
  );
  writeDirective(
    directives,
    'four',
    `<process>
    ${bash('one', 'echo one >> effects; echo first')}
    ${bash('two', 'echo two >> effects; echo second')}
    ${gate}
    <step name="four"><render>\${steps.one.result.stdout}\${steps.two.result.stdout}then four</render></step>
  </process>
  <outputs><output name="said" value="\${steps.four.result}"/></outputs>`,
  );
  writeDirective(
    directives,
    'retried',
    `<process>
    ${bash('one', 'echo one >> effects')}
    ${bash('gate', 'echo gate >> effects; test -f open || exit 3', '<retry attempts="2" backoff="fixed" delay_ms="1"/>')}
  </process>`,
  );
  writeDirective(
    directives,
    'held',
    `<process>
    ${bash('one', 'echo one >> effects')}
    <step name="hold"><wait signal="go"/></step>
    <step name="after"><render>got \${steps.hold.result}</render></step>
  </process>
  <outputs><output name="got" value="\${steps.after.result}"/></outputs>`,
  );
  writeDirective(
    directives,
    'slow',
    `<metadata><limits duration_seconds="1"/></metadata>
  <process>
    ${bash('one', 'echo one >> effects')}
    ${bash('wait', 'test -f open || sleep 5')}
  </process>`,
  );
  return dir;
}

const effects = (dir: string) =>
  existsSync(join(dir, 'effects'))
    ? readFileSync(join(dir, 'effects'), 'utf8').trim().split('\n')
    : [];

for (const mode of MODES) {
  describe(`redrive (${mode})`, { timeout: 40_000 }, () => {
    async function open(): Promise<{ dirigent: Dirigent; dir: string }> {
      const dir = project();
      return { dirigent: await modes.open(mode, dir), dir };
    }

    it('goes on from the failed step under the same id; the completed steps run once', async () => {
      const { dirigent, dir } = await open();
      const run = await dirigent.start({ directive: 'four' });
      const failed = await run.wait();
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatchObject({ step: 'gate' });
      writeFileSync(join(dir, 'open'), '');
      const record = await run.redrive({ by: 'ops:ada' });
      expect(record.runId).toBe(run.runId);
      expect(record.status).toBe('completed');
      expect(record.outputs).toEqual({ said: 'first\nsecond\nthen four' });
      expect(effects(dir)).toEqual(['one', 'two', 'gate', 'gate']);
      // The record keeps the history: the failed attempt, then the one after the redrive.
      expect(record.steps.map((s) => [s.name, s.status, s.attempts])).toEqual([
        ['one', 'completed', 1],
        ['two', 'completed', 1],
        ['gate', 'failed', 1],
        ['gate', 'completed', 2],
        ['four', 'completed', 1],
      ]);
      expect(record.redrives).toEqual([
        {
          at: expect.any(Number),
          by: 'ops:ada',
          steps: ['gate'],
          status: 'failed',
          error: expect.objectContaining({ step: 'gate' }),
        },
      ]);
      expect(record.error).toBeNull();
      expect(record.endedAt).toBeGreaterThanOrEqual(record.redrives![0]!.at);
      expect((await dirigent.get(run.runId)).status).toBe('completed');
    });

    it('tells what the redrive sets going to an observer; the feed goes on after the first run.ended', async () => {
      const { dirigent, dir } = await open();
      const run = await dirigent.start({ directive: 'four' });
      await run.wait();
      writeFileSync(join(dir, 'open'), '');
      const told: string[] = [];
      await dirigent.redrive(run.runId, {
        observer: {
          runRedriven: (_id, entry) => told.push(`redriven:${entry.steps.join(',')}`),
          stepStarted: (_id, step, attempt) => told.push(`started:${step}:${attempt}`),
          stepEnded: (_id, entry) => told.push(`ended:${entry.name}:${entry.status}`),
          runEnded: (r) => told.push(`run:${r.status}`),
        },
      });
      expect(told).toEqual([
        'redriven:gate',
        'started:gate:2',
        'ended:gate:completed',
        'started:four:1',
        'ended:four:completed',
        'run:completed',
      ]);
      // A feed ends at a run.ended, as it did when the run failed; after it, the redrive.
      const read = async (after: string) => {
        const events: RunFeedEvent[] = [];
        for await (const e of await run.watch({ after })) events.push(e);
        return events;
      };
      const first = await read('0');
      expect(first.at(-1)).toMatchObject({ type: 'run.ended', record: { status: 'failed' } });
      const then = await read(first.at(-1)!.id);
      expect(then.map((e) => ('step' in e ? `${e.type}:${e.step}` : e.type))).toEqual([
        'run.redriven',
        'step.started:gate',
        'step.ended:gate',
        'step.started:four',
        'step.ended:four',
        'run.ended',
      ]);
    });

    it('gives the redriven step its retries again, its attempts counting on', async () => {
      const { dirigent, dir } = await open();
      const run = await dirigent.start({ directive: 'retried' });
      expect((await run.wait()).steps.map((s) => [s.name, s.status, s.attempts])).toEqual([
        ['one', 'completed', 1],
        ['gate', 'failed', 2],
      ]);
      // Still shut: the redrive tries twice more, then fails again.
      const again = await run.redrive();
      expect(again.status).toBe('failed');
      expect(again.steps.at(-1)).toMatchObject({ name: 'gate', status: 'failed', attempts: 4 });
      expect(effects(dir)).toEqual(['one', 'gate', 'gate', 'gate', 'gate']);
      writeFileSync(join(dir, 'open'), '');
      const done = await run.redrive();
      expect(done.status).toBe('completed');
      expect(done.steps.at(-1)).toMatchObject({ name: 'gate', status: 'completed', attempts: 5 });
      expect(done.redrives?.map((r) => r.by)).toEqual(['library', 'library']);
      expect(effects(dir).filter((e) => e === 'one')).toHaveLength(1);
    });

    it('redrives a cancelled run from the step it was in: a wait waits again', async () => {
      const { dirigent, dir } = await open();
      const run = await dirigent.start({ directive: 'held' });
      expect((await run.wait()).status).toBe('waiting');
      expect((await run.cancel()).status).toBe('cancelled');
      const waiting = await run.redrive();
      expect(waiting.status).toBe('waiting');
      expect(waiting.waiting?.map((w) => w.step)).toEqual(['hold']);
      expect(waiting.redrives?.[0]).toMatchObject({ steps: ['hold'], status: 'cancelled' });
      const done = await run.signal('go', 'yes');
      expect(done.status).toBe('completed');
      expect(done.outputs).toEqual({ got: 'got yes' });
      expect(effects(dir)).toEqual(['one']);
    });

    it('counts the time limit from the redrive', async () => {
      const { dirigent, dir } = await open();
      const run = await dirigent.start({ directive: 'slow' });
      const failed = await run.wait();
      expect(failed.error?.code).toBe('RUN_TIMEOUT');
      writeFileSync(join(dir, 'open'), '');
      const done = await run.redrive();
      expect(done.status).toBe('completed');
      expect(effects(dir)).toEqual(['one']);
    });

    it('refuses a completed, a waiting and an unknown run with a clear code', async () => {
      const { dirigent, dir } = await open();
      writeFileSync(join(dir, 'open'), '');
      const completed = await dirigent.run({ directive: 'four' });
      const e1 = await rejection(dirigent.redrive(completed.runId));
      expect(e1).toMatchObject({
        code: 'RUN_NOT_REDRIVABLE',
        details: { runId: completed.runId, status: 'completed' },
      });
      expect(e1.message).toMatch(/cannot be redriven: it completed/);
      const held = await dirigent.start({ directive: 'held' });
      await held.wait();
      const e2 = await rejection(held.redrive());
      expect(e2).toMatchObject({ code: 'RUN_NOT_REDRIVABLE' });
      expect(e2.message).toMatch(/waits for a signal/);
      const e3 = await rejection(dirigent.redrive('6f1d2c3b-0000-4000-8000-000000000000'));
      expect(e3).toMatchObject({ code: 'RUN_NOT_FOUND' });
    });
  });
}
