/**
 * A Sentinel failover under load: a primary, a replica and three sentinels of the test's own
 * (`bench/local-redis/sentinel-group.ts`), a worker and a client on `redis+sentinel://…`. The
 * primary is killed while runs are in flight; the sentinels promote the replica, every process
 * follows, and every run completes with each of its steps run once: no step's end that the worker
 * recorded (and waited for a replica to hold) is lost.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SentinelGroup } from '../../bench/local-redis/sentinel-group.js';
import { Dirigent } from '../../src/operations/dirigent.js';
import { DirigentWorker } from '../../src/worker/dirigent-worker.js';
import { SILENT_LOGGER } from '../../src/telemetry/logger.js';
import { writeDirective } from '../support/directive-file.js';
import { waitFor } from '../support/wait-for.js';

const STEPS = 4;
const RUNS = 8;
let group: SentinelGroup;
let project: string;

beforeAll(async () => {
  group = await SentinelGroup.start();
  project = mkdtempSync(join(tmpdir(), 'dirigent-failover-'));
  mkdirSync(join(project, '.ai', 'directives'), { recursive: true });
  const step = (k: number) =>
    `<step name="s${k}"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo start $(date +%s%3N) {input:n} s${k} >> steps.log; sleep 0.25; echo {input:n}-${k}"/></execute></step>`;
  writeDirective(
    join(project, '.ai', 'directives'),
    'steps',
    `<inputs><input name="n" type="integer" required="true"/></inputs>
    <process>${Array.from({ length: STEPS }, (_, k) => step(k)).join('')}</process>
    <outputs><output name="last" expr="$trim(steps.s${STEPS - 1}.result.stdout)"/></outputs>`,
  );
}, 60_000);

afterAll(async () => {
  await group?.stop();
  rmSync(project, { recursive: true, force: true });
});

/** The steps the runs started, from the log they write: `[time, run input, step]`. */
function started(): [number, string, string][] {
  let text = '';
  try {
    text = readFileSync(join(project, 'steps.log'), 'utf8');
  } catch {
    return [];
  }
  return text
    .trim()
    .split('\n')
    .map((line) => line.split(' '))
    .map(([, at, n, step]) => [Number(at), n!, step!]);
}

describe('a Sentinel failover', { timeout: 90_000 }, () => {
  it('loses no recorded step: runs in flight complete after it, each step run once', async () => {
    const prefix = 'failover';
    const worker = await DirigentWorker.start({
      redis: group.url,
      prefix,
      project,
      logger: SILENT_LOGGER,
    });
    const dirigent = await Dirigent.open({ project, redis: group.url, prefix });
    try {
      const runs = await Promise.all(
        Array.from({ length: RUNS }, (_, n) =>
          dirigent.start({ directive: 'steps', inputs: { n } }),
        ),
      );
      // When each step's end reaches a client, through the run's feed: only once it is stored.
      const ended: number[] = [];
      const feeds = await Promise.all(runs.map((r) => dirigent.watch(r.runId)));
      const heard = feeds.map(async (feed) => {
        for await (const event of feed) if (event.type === 'step.ended') ended.push(Date.now());
      });
      // In flight: every run has begun a step, none has ended.
      await waitFor(() => started().length >= RUNS, {
        what: 'every run to start a step',
        timeoutMs: 20_000,
        intervalMs: 20,
      });
      const { port, at } = await group.killPrimary();
      const promoted = (await group.failedOver(port), Date.now());
      const outcomes = await Promise.all(runs.map((r) => r.result()));
      expect(outcomes).toEqual(
        Array.from({ length: RUNS }, (_, n) => ({ last: `${n}-${STEPS - 1}` })),
      );
      await Promise.all(heard);
      // Runs progress again: the first step's end stored after the primary died.
      const progress = Math.min(...ended.filter((t) => t > at)) - at;
      console.log(
        `failover: a replica was primary ${promoted - at} ms after the primary died; a step's end was stored again after ${progress} ms`,
      );
      expect(progress).toBeLessThan(10_000);
      const lines = started();
      // Each step of each run began once: none was lost and run again.
      const counts = new Map<string, number>();
      for (const [, n, step] of lines)
        counts.set(`${n} ${step}`, (counts.get(`${n} ${step}`) ?? 0) + 1);
      expect(counts.size).toBe(RUNS * STEPS);
      const again = [...counts].filter(([, c]) => c > 1).map(([k]) => k);
      expect(again).toEqual([]);

      // The deployment goes on at its pace, though the new primary has no replica left: a run
      // started after the failover completes without waiting for one at every step.
      const begun = Date.now();
      const after = await dirigent.run({ directive: 'steps', inputs: { n: 99 } });
      expect(after.outputs).toEqual({ last: `99-${STEPS - 1}` });
      expect(Date.now() - begun).toBeLessThan(STEPS * 250 + 4000);
    } finally {
      await dirigent.close();
      await worker.close();
    }
  });
});
