/**
 * Priorities on Redis: when workers are busy, runs start higher priority first and in start
 * order within a priority; a start's own priority wins over its directive's `<priority>`, and
 * runs with none have 5. Signals and cancels of runs under way are never held behind starts.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Dirigent } from '../../src/operations/dirigent.js';
import { writeDirective } from '../support/directive-file.js';
import { inProcessWorker } from '../support/in-process-worker.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers.length = 0;
});

/** `note` writes its input `name` to `order`; `urgent` declares `<priority value="9"/>`. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-priority-'));
  const directives = join(dir, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  const note = `<inputs><input name="name" type="string" required="true"/></inputs>
  <process><step name="note"><retry attempts="1"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo {input:name} >> order"/></execute></step></process>`;
  writeDirective(directives, 'note', note);
  writeDirective(directives, 'urgent', `<metadata><priority value="9"/></metadata>${note}`);
  closers.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('run priorities (redis)', { timeout: 30_000 }, () => {
  it('starts higher priorities first, in start order within one, once a worker is free', async () => {
    const dir = project();
    const dirigent = await Dirigent.open({ project: dir, redis: redis.url, prefix: redis.prefix });
    closers.push(() => dirigent.close());
    // No worker yet: every start waits in the queue.
    const starts: [string, string, number | undefined][] = [
      ['note', 'low-a', 1],
      ['note', 'plain-a', undefined],
      ['urgent', 'urgent-declared', undefined],
      ['note', 'top', 10],
      ['urgent', 'urgent-lowered', 2],
      ['note', 'plain-b', undefined],
      ['note', 'low-b', 1],
    ];
    const ids: string[] = [];
    for (const [directive, name, priority] of starts) {
      const run = await dirigent.start({
        directive,
        inputs: { name },
        ...(priority !== undefined && { priority }),
      });
      ids.push(run.runId);
    }
    const worker = inProcessWorker(redis, { projectDir: dir, concurrency: 1 });
    closers.push(() => worker.close());
    for (const id of ids) expect((await dirigent.wait(id)).status).toBe('completed');
    const order = readFileSync(join(dir, 'order'), 'utf8').trim().split('\n');
    expect(order).toEqual([
      'top',
      'urgent-declared',
      'plain-a',
      'plain-b',
      'urgent-lowered',
      'low-a',
      'low-b',
    ]);
  });

  it('refuses a priority outside 1 to 10', async () => {
    const dir = project();
    const dirigent = await Dirigent.open({ project: dir, redis: redis.url, prefix: redis.prefix });
    closers.push(() => dirigent.close());
    for (const priority of [0, 11, 2.5])
      await expect(
        dirigent.start({ directive: 'note', inputs: { name: 'x' }, priority }),
      ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
  });
});
