/**
 * The library's front door: `Dirigent.start` returns a handle on the run (its id, `status()`,
 * `wait()`, `result()`, `signal()`, `cancel()`, `watch()` on the run's event feed), and a start
 * or a signal given an observer tells every step before `wait` answers. Embedded and on Redis
 * (workers in this process) alike.
 */
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Dirigent } from '../../src/operations/dirigent.js';
import type { RunFeedEvent } from '../../src/run-backend/run-feed-event.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentModes, MODES } from '../support/dirigent-modes.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();

/** A project with `two` (two steps), `ask` (a step, a wait for `go`, a step) and `boom` (fails). */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-handle-'));
  const directives = join(dir, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeDirective(
    directives,
    'two',
    `<inputs><input name="who" type="string" required="true"/></inputs>
  <process>
    <step name="a"><render>hello \${inputs.who}</render></step>
    <step name="b"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo done"/></execute></step>
  </process>
  <outputs><output name="said" value="\${steps.a.result}"/></outputs>`,
  );
  writeDirective(
    directives,
    'ask',
    `<process>
    <step name="before"><render>asking</render></step>
    <step name="hold"><wait signal="go"/></step>
    <step name="after"><render>got \${steps.hold.result}</render></step>
  </process>
  <outputs><output name="got" value="\${steps.after.result}"/></outputs>`,
  );
  writeDirective(
    directives,
    'boom',
    `<process><step name="fail"><retry attempts="1"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo no >&amp;2; exit 3"/></execute></step></process>`,
  );
  return dir;
}

/** The types of events, with the step of step events. */
const names = (events: RunFeedEvent[]) =>
  events.map((e) => ('step' in e ? `${e.type}:${e.step}` : e.type));

const modes = dirigentModes(redis);

for (const mode of MODES) {
  describe(`a run handle (${mode})`, { timeout: 30_000 }, () => {
    async function open(): Promise<Dirigent> {
      const dir = project();
      const dirigent = await modes.open(mode, dir);
      return dirigent;
    }

    it('starts a run and gives its id, its status, its result and its whole feed', async () => {
      const dirigent = await open();
      const run = await dirigent.start({ directive: 'two', inputs: { who: 'Ada' } });
      expect(run.id).toBe(run.runId);
      expect(run.created).toBe(true);
      expect(await run.result()).toEqual({ said: 'hello Ada' });
      expect((await run.status()).status).toBe('completed');
      const events: RunFeedEvent[] = [];
      for await (const event of await run.watch({ after: '0' })) events.push(event);
      expect(names(events)).toEqual([
        'run.started',
        'step.started:a',
        'step.ended:a',
        'step.started:b',
        'step.ended:b',
        'run.ended',
      ]);
      // Without `after`: the record as it stands, and the feed ends with it.
      const now: RunFeedEvent[] = [];
      for await (const event of await run.watch()) now.push(event);
      expect(names(now)).toEqual(['run.state']);
    });

    it('follows a run through its wait: result() waits past it, signal() resumes it', async () => {
      const dirigent = await open();
      const run = await dirigent.start({ directive: 'ask' });
      const result = run.result();
      const waiting = await run.wait();
      expect(waiting.status).toBe('waiting');
      const feed = await run.watch();
      const seen: RunFeedEvent[] = [];
      const reading = (async () => {
        for await (const event of feed) seen.push(event);
      })();
      expect((await run.signal('go', 'yes')).status).toBe('completed');
      expect(await result).toEqual({ got: 'got yes' });
      await reading;
      expect(names(seen)).toEqual([
        'run.state',
        'step.ended:hold',
        'step.started:after',
        'step.ended:after',
        'run.ended',
      ]);
    });

    it("rejects result() with the run's own error when it fails, and says a cancel came too late", async () => {
      const dirigent = await open();
      const run = await dirigent.start({ directive: 'boom' });
      await expect(run.result()).rejects.toMatchObject({
        code: 'COMMAND_FAILED',
        details: { runId: run.runId, status: 'failed' },
      });
      await expect(run.cancel()).rejects.toMatchObject({ code: 'RUN_ENDED' });
    });

    it('cancels a waiting run through its handle', async () => {
      const dirigent = await open();
      const run = await dirigent.start({ directive: 'ask' });
      expect((await run.wait()).status).toBe('waiting');
      expect((await run.cancel('no longer needed')).status).toBe('cancelled');
      await expect(run.result()).rejects.toMatchObject({ details: { status: 'cancelled' } });
    });

    it('tells an observer every step before wait() answers, from a start and from a signal', async () => {
      const dirigent = await open();
      const told: string[] = [];
      const observer = {
        stepStarted: (_: string, step: string) => told.push(`started ${step}`),
        stepEnded: (_: string, e: { name: string; status: string }) =>
          told.push(`${e.status} ${e.name}`),
      };
      const { runId } = await dirigent.start({ directive: 'ask', observer });
      expect((await dirigent.wait(runId)).status).toBe('waiting');
      expect(told).toEqual(['started before', 'completed before', 'started hold']);
      told.length = 0;
      const record = await dirigent.signal(runId, 'go', 'now', { observer });
      expect(record.status).toBe('completed');
      expect(told).toEqual(['completed hold', 'started after', 'completed after']);
    });
  });
}
