/**
 * Tags on runs, embedded and on Redis (a worker in this process): a directive's <tag>s are
 * rendered from the run's inputs when it starts, the start's own tags are added and win, the
 * record carries them, and runs are listed by any set of them. On Redis a tag is an index of its
 * own, which forgetting a run empties.
 */
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Dirigent } from '../../src/operations/dirigent.js';
import { RedisRunStore } from '../../src/redis/run-store/redis-run-store.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentModes, MODES } from '../support/dirigent-modes.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-tags-'));
  const directives = join(dir, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeDirective(
    directives,
    'order',
    `<metadata>
    <description>An order</description>
    <tag name="customer" value="\${inputs.customer}"/>
    <tag name="kind" value="order"/>
    <tag name="region" value="{input:region?}"/>
  </metadata>
  <inputs>
    <input name="customer" type="string" required="true"/>
    <input name="region" type="string" required="false"/>
  </inputs>
  <process><step name="take"><render>order of \${inputs.customer}</render></step></process>`,
  );
  return dir;
}

const modes = dirigentModes(redis);

for (const mode of MODES) {
  describe(`tags on runs (${mode})`, { timeout: 30_000 }, () => {
    async function open(): Promise<Dirigent> {
      const dir = project();
      const dirigent = await modes.open(mode, dir);
      return dirigent;
    }

    /** Runs `order` to its end and answers its id; each in a later millisecond than the last. */
    async function order(
      dirigent: Dirigent,
      inputs: Record<string, string>,
      tags?: Record<string, string>,
    ): Promise<string> {
      const before = Date.now();
      const run = await dirigent.start({ directive: 'order', inputs, ...(tags && { tags }) });
      expect((await run.wait()).status).toBe('completed');
      while (Date.now() === before) await new Promise((r) => setImmediate(r));
      return run.runId;
    }

    it("renders the directive's tags from the inputs, adds the start's, which win, and lists runs by any of them", async () => {
      const dirigent = await open();
      const a = await order(dirigent, { customer: 'c1', region: 'eu' });
      const b = await order(dirigent, { customer: 'c2' });
      const c = await order(dirigent, { customer: 'c1' }, { priority: 'high', kind: 'refund' });

      expect((await dirigent.get(a)).tags).toEqual({ customer: 'c1', kind: 'order', region: 'eu' });
      // An optional input the run was not given leaves its tag out.
      expect((await dirigent.get(b)).tags).toEqual({ customer: 'c2', kind: 'order' });
      expect((await dirigent.get(c)).tags).toEqual({
        customer: 'c1',
        kind: 'refund',
        priority: 'high',
      });

      const ids = async (tags: Record<string, string>) =>
        (await dirigent.list({ tags })).runs.map((r) => r.runId);
      expect(await ids({ customer: 'c1' })).toEqual([c, a]);
      expect(await ids({ customer: 'c1', kind: 'order' })).toEqual([a]);
      expect(await ids({ kind: 'order' })).toEqual([b, a]);
      expect(await ids({ customer: 'c3' })).toEqual([]);
      // Each list entry says its inputs in a few words, so runs of one directive tell apart.
      expect(
        (await dirigent.list({ tags: { customer: 'c1' } })).runs.map((r) => r.summary),
      ).toEqual(['customer=c1', 'customer=c1, region=eu']);
      // With the other filters and pages.
      expect(
        (await dirigent.list({ tags: { customer: 'c1' }, status: 'completed', limit: 1 })).runs,
      ).toMatchObject([{ runId: c }]);
    });

    it('refuses malformed tags before anything runs', async () => {
      const dirigent = await open();
      const bad: Record<string, string>[] = [
        { '1st': 'x' },
        { customer: 'a\nb' },
        { customer: '' },
      ];
      for (const tags of bad)
        await expect(
          dirigent.start({ directive: 'order', inputs: { customer: 'c1' }, tags }),
        ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
      await expect(dirigent.list({ tags: { 'no good': 'x' } })).rejects.toMatchObject({
        code: 'INVALID_REQUEST',
      });
      expect((await dirigent.list({})).runs).toEqual([]);
    });

    if (mode === 'redis')
      it('keeps an index per tag, emptied when a run is forgotten', async () => {
        const dirigent = await open();
        const a = await order(dirigent, { customer: 'c9' });
        const key = `${redis.prefix}:runs:tag:customer=c9`;
        expect(await redis.redis.zrange(key, 0, -1)).toEqual([a]);
        expect(await redis.redis.hget(`${redis.prefix}:runs:tags-of`, a)).toBe(
          'customer=c9\nkind=order',
        );
        const store = new RedisRunStore(redis.redis, { prefix: redis.prefix });
        expect(await store.delete(a)).toBe(true);
        expect(await redis.redis.exists(key)).toBe(0);
        expect(await redis.redis.hget(`${redis.prefix}:runs:tags-of`, a)).toBeNull();
      });
  });
}
