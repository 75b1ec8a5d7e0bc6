/** The chaos run's report as text. */
import type { ChaosReport } from './run-chaos.js';

/** The value at quantile `q` (0–1) of `xs`, or NaN when empty. */
function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

/** A few examples of a list, and how many there are. */
function some(list: readonly string[]): string {
  return list.length === 0
    ? 'none'
    : `${list.length} (${list.slice(0, 5).join('; ')}${list.length > 5 ? '; …' : ''})`;
}

/** The report, one fact per line. */
export function formatChaosReport(r: ChaosReport): string {
  const t = r.takeoversMs;
  return [
    `chaos run: ${r.ok ? 'nothing lost' : 'SOMETHING WENT WRONG'}`,
    `runs: ${r.runs} in ${r.seconds.toFixed(0)} s (${r.runsPerSecond.toFixed(1)} runs/s); by status: ${JSON.stringify(r.statuses)}`,
    `workers killed: ${r.kills}; takeovers measured: ${t.length}, p50 ${quantile(t, 0.5)} ms, p99 ${quantile(t, 0.99)} ms, max ${quantile(t, 1)} ms`,
    `Redis restarts: ${r.redisRestartsMs.length} (${r.redisRestartsMs.map((ms) => `${ms} ms`).join(', ') || 'none'}); workers paused past their lease: ${r.pauses}`,
    `runs not completed as expected: ${some(r.wrongRuns)}`,
    `side effects lost: ${some(r.lostEffects)}`,
    `side effects made but not logged (a call killed between its guard and its log line): ${some(r.cutEffects)}`,
    `side effects duplicated: ${some(r.duplicatedEffects)}`,
    `tool calls made again (at least once, around lost workers): ${r.repeatedCalls}`,
    ...(r.wrongRunLines.length > 0
      ? ['the workers on the runs not completed:', ...r.wrongRunLines.map((l) => `  ${l}`)]
      : []),
  ].join('\n');
}
