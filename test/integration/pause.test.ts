/**
 * Pause and resume: while a directive (or the whole deployment) is paused, its new runs are
 * accepted and wait as `paused` before their first step, and a run under way finishes the step it
 * is in and then waits as `paused`; both are listed and counted as such, and cancels still reach
 * them. Resume begins their held steps, in the order the runs started. A pause is kept where the
 * deployment keeps its state: another process opening the project sees it. Embedded and on Redis
 * (a worker in this process) alike; across a restart of every process in `test/e2e/pause-restart.test.ts`.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Dirigent } from '../../src/operations/dirigent.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentModes, MODES } from '../support/dirigent-modes.js';
import { redisForTest } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';

const redis = redisForTest();
const modes = dirigentModes(redis);

const bash = (name: string, command: string) =>
  `<step name="${name}"><retry attempts="1"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="${command}"/></execute></step>`;

/**
 * `three`: three steps, each writing `<input name>:<step>` to `log`; the first, with input
 * `slow`, waits for the file `go` first. `other` is a one-step directive.
 */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-pause-'));
  const directives = join(dir, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeDirective(
    directives,
    'three',
    `<inputs><input name="name" type="string" required="true"/><input name="slow" type="boolean" default="false"/></inputs>
  <process>
    ${bash('one', 'touch started; if [ {input:slow} = true ]; then while [ ! -f go ]; do sleep 0.05; done; fi; echo {input:name}:one >> log')}
    ${bash('two', 'echo {input:name}:two >> log')}
    ${bash('three', 'echo {input:name}:three >> log')}
  </process>`,
  );
  writeDirective(directives, 'other', `<process>${bash('only', 'echo other >> log')}</process>`);
  return dir;
}

const log = (dir: string) =>
  existsSync(join(dir, 'log')) ? readFileSync(join(dir, 'log'), 'utf8').trim().split('\n') : [];

for (const mode of MODES) {
  describe(`pause and resume (${mode})`, { timeout: 40_000 }, () => {
    async function open(): Promise<{ dirigent: Dirigent; dir: string }> {
      const dir = project();
      return { dirigent: await modes.open(mode, dir), dir };
    }

    it('holds new runs before their first step, lists and counts them, and resumes them in start order', async () => {
      const { dirigent, dir } = await open();
      expect(await dirigent.pause({ directive: 'three' })).toEqual({
        all: false,
        directives: ['three'],
      });
      const a = await dirigent.start({ directive: 'three', inputs: { name: 'a' } });
      const b = await dirigent.start({ directive: 'three', inputs: { name: 'b' } });
      expect((await a.wait()).status).toBe('paused');
      expect((await b.wait()).status).toBe('paused');
      expect(log(dir)).toEqual([]);
      // Another directive is not held.
      expect((await dirigent.run({ directive: 'other' })).status).toBe('completed');
      const { runs } = await dirigent.list({ status: 'paused' });
      expect(runs.map((r) => r.runId).sort()).toEqual([a.runId, b.runId].sort());
      expect((await dirigent.runs.counts({ directive: 'three' })).byStatus.paused).toBe(2);

      const { resumed, paused } = await dirigent.resume({ directive: 'three' });
      expect(resumed).toBe(2);
      expect(paused).toEqual({ all: false, directives: [] });
      for (const run of [a, b])
        await waitFor(async () => (await run.status()).status === 'completed', {
          what: `run ${run.runId} resumed to its end`,
        });
      const lines = log(dir).filter((l) => l !== 'other');
      expect(lines.sort()).toEqual(['a:one', 'a:three', 'a:two', 'b:one', 'b:three', 'b:two']);
    });

    it('lets a run under way finish its step, then holds the next one', async () => {
      const { dirigent, dir } = await open();
      const run = await dirigent.start({ directive: 'three', inputs: { name: 'x', slow: true } });
      await waitFor(() => existsSync(join(dir, 'started')), { what: 'the first step to start' });
      await dirigent.pause({ directive: 'three' });
      writeFileSync(join(dir, 'go'), '');
      const paused = await waitFor(
        async () => {
          const r = await run.status();
          return r.status === 'paused' && r;
        },
        { what: 'the run to pause after its first step' },
      );
      expect(paused.steps.map((s) => `${s.name}:${s.status}`)).toEqual(['one:completed']);
      expect(log(dir)).toEqual(['x:one']);
      await dirigent.resume({ directive: 'three' });
      await waitFor(async () => (await run.status()).status === 'completed', {
        what: 'the run to end once resumed',
      });
      expect(log(dir)).toEqual(['x:one', 'x:two', 'x:three']);
    });

    it('pauses the whole deployment; a directive resumed alone stays held by it; cancel still works', async () => {
      const { dirigent, dir } = await open();
      await dirigent.pause({ all: true });
      const held = await dirigent.start({ directive: 'other' });
      const doomed = await dirigent.start({ directive: 'three', inputs: { name: 'c' } });
      expect((await held.wait()).status).toBe('paused');
      expect((await doomed.wait()).status).toBe('paused');
      const still = await dirigent.resume({ directive: 'other' });
      expect(still).toEqual({ paused: { all: true, directives: [] }, resumed: 0 });
      expect((await doomed.cancel()).status).toBe('cancelled');
      // Another process opening the project sees the pause.
      const again = await Dirigent.open({
        project: dir,
        ...(mode === 'redis' && { redis: redis.url, prefix: redis.prefix }),
      });
      try {
        expect(await again.pauses()).toEqual({ all: true, directives: [] });
      } finally {
        await again.close();
      }
      expect((await dirigent.resume({ all: true })).resumed).toBe(1);
      await waitFor(async () => (await held.status()).status === 'completed', {
        what: 'the held run to end once all is resumed',
      });
      expect(log(dir)).toEqual(['other']);
    });

    it('refuses to pause a directive the project does not have, or neither a directive nor all', async () => {
      const { dirigent } = await open();
      await expect(dirigent.pause({ directive: 'nope' })).rejects.toMatchObject({
        code: 'UNKNOWN_DIRECTIVE',
      });
      await expect(dirigent.pause({} as never)).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    });
  });
}
