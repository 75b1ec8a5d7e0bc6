/**
 * The chaos run's short form (`npm run chaos` is the full one): three workers and a private Redis,
 * workers killed every few seconds, Redis restarted twice, a worker paused past its lease; every
 * run completes with each step recorded once, and no guarded side effect is lost or repeated.
 */
import { describe, expect, it } from 'vitest';
import { formatChaosReport } from '../../bench/chaos/format-chaos-report.js';
import { runChaos } from '../../bench/chaos/run-chaos.js';
import { CLI_MAIN } from '../support/paths.js';

describe('chaos', () => {
  it(
    'loses nothing while workers are killed, Redis restarts and a worker is paused',
    { timeout: 240_000 },
    async () => {
      const report = await runChaos({
        cli: CLI_MAIN,
        durationMs: 30_000,
        runs: 100,
        killEveryMs: 4000,
      });
      console.log(formatChaosReport(report));
      expect(report.wrongRuns).toEqual([]);
      expect(report.lostEffects).toEqual([]);
      expect(report.duplicatedEffects).toEqual([]);
      expect(report.statuses).toEqual({ completed: 100 });
      expect(report.kills).toBeGreaterThanOrEqual(6);
      expect(report.redisRestartsMs).toHaveLength(2);
      // Every killed worker that held jobs had them taken over within seconds.
      for (const ms of report.takeoversMs) expect(ms).toBeLessThan(5000);
    },
  );
});
