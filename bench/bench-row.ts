/** One line of the benchmark table, and how it is built from per-round timings. */
import { median } from './median.js';

/** A measured figure with what it is compared against. */
export interface BenchRow {
  name: string;
  /** Median over rounds of microseconds per operation. */
  us: number;
  /** Fastest and slowest round, µs per operation: how noisy the machine was. */
  range: [number, number];
  /** Operations per second at the median: `1e6 / us`. */
  rate: number;
  /** What `rate` counts, e.g. `compiles/s`. */
  unit: string;
  /** Against the baseline measured in the same rounds (Markdown), or `baseline`. */
  comparison: string;
  /** The goal in words; empty for baselines. */
  goal: string;
  /** Whether the goal is met; undefined for baselines. */
  met?: boolean;
}

/** A row from the per-round µs per operation of one task; `goal.met` judges the median. */
export function benchRow(
  name: string,
  rounds: readonly number[],
  unit: string,
  comparison = 'baseline',
  goal?: { text: string; met: (usPerOp: number) => boolean },
): BenchRow {
  const us = median(rounds);
  return {
    name,
    us,
    range: [Math.min(...rounds), Math.max(...rounds)],
    rate: 1e6 / us,
    unit,
    comparison,
    goal: goal?.text ?? '',
    ...(goal && { met: goal.met(us) }),
  };
}

/**
 * The median over rounds of `f(subject, baseline)` taken within each round, so that both sides
 * of each ratio or difference were measured under the same load.
 */
export function withinRounds(
  subject: readonly number[],
  baseline: readonly number[],
  f: (subject: number, baseline: number) => number,
): number {
  return median(subject.map((s, i) => f(s, baseline[i]!)));
}
