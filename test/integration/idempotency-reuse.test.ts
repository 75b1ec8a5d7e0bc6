/**
 * The reuse policy of an idempotency key, embedded and on Redis (a worker in this process): by
 * default a key answers its run, however it ended; with reuse `failed`, a start under the key of
 * a failed or cancelled run starts one new run (however many starts race there), which the key
 * then names for every later start, whatever their policy. A completed run is never reused.
 */
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Dirigent } from '../../src/operations/dirigent.js';
import type { StartRequest } from '../../src/operations/start-request.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentModes, MODES } from '../support/dirigent-modes.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();

/** A project whose `charge` fails until the file `ok` exists, and logs each run that got through. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-reuse-'));
  const directives = join(dir, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeDirective(
    directives,
    'charge',
    `<inputs><input name="order" type="string" required="true"/></inputs>
  <process><step name="charge"><retry attempts="1"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="test -f ok || { echo 'card declined' >&amp;2; exit 1; }; echo {input:order} >> charged.log"/></execute></step></process>`,
  );
  return dir;
}

const modes = dirigentModes(redis);

for (const mode of MODES) {
  describe(`reusing an idempotency key (${mode})`, { timeout: 30_000 }, () => {
    async function open(): Promise<{ dirigent: Dirigent; dir: string }> {
      const dir = project();
      const dirigent = await modes.open(mode, dir);
      return { dirigent, dir };
    }

    const request: StartRequest = {
      directive: 'charge',
      inputs: { order: 'A-1' },
      idempotencyKey: 'charge-A-1',
    };

    it('answers a failed run by default; with reuse "failed" starts one new run, which the key then names', async () => {
      const { dirigent, dir } = await open();
      const first = await dirigent.start(request);
      expect((await first.wait()).status).toBe('failed');
      // The default policy answers the failed run.
      const again = await dirigent.start(request);
      expect({ runId: again.runId, created: again.created }).toEqual({
        runId: first.runId,
        created: false,
      });
      expect(again.record.status).toBe('failed');

      // Five starts race with reuse "failed": one new run, and all of them name it.
      writeFileSync(join(dir, 'ok'), '');
      const racing = await Promise.all(
        Array.from({ length: 5 }, () => dirigent.start({ ...request, reuse: 'failed' })),
      );
      const ids = new Set(racing.map((r) => r.runId));
      expect(ids.size).toBe(1);
      const [second] = [...ids] as string[];
      expect(second).not.toBe(first.runId);
      expect(racing.filter((r) => r.created)).toHaveLength(1);
      expect((await dirigent.wait(second!)).status).toBe('completed');
      expect(readFileSync(join(dir, 'charged.log'), 'utf8')).toBe('A-1\n');

      // The key names the new run now, for any policy; a completed run is not reused.
      for (const reuse of [undefined, 'never', 'failed'] as const) {
        const later = await dirigent.start({ ...request, ...(reuse && { reuse }) });
        expect({ runId: later.runId, created: later.created }).toEqual({
          runId: second,
          created: false,
        });
      }
      // The first run is kept as it was.
      expect((await dirigent.get(first.runId)).status).toBe('failed');
    });

    it('refuses an unknown policy, and a policy without a key, before anything runs', async () => {
      const { dirigent, dir } = await open();
      await expect(dirigent.start({ ...request, reuse: 'always' as never })).rejects.toMatchObject({
        code: 'INVALID_REQUEST',
        message: expect.stringContaining('"always"'),
      });
      await expect(
        dirigent.start({ directive: 'charge', inputs: { order: 'A-2' }, reuse: 'failed' }),
      ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
      expect((await dirigent.list({ directive: 'charge' })).runs).toEqual([]);
      expect(() => readFileSync(join(dir, 'charged.log'))).toThrow();
    });
  });
}
