/**
 * Runs benchmark tasks in several short rounds, each round timing every task once with tinybench,
 * in a rotated order. On a shared, noisy machine this keeps a baseline and its subject measured
 * close together in time, so ratios between them are steadier than either figure alone.
 */
import { Bench } from 'tinybench';

/** One thing to time. */
export interface RoundTask {
  name: string;
  /**
   * One tinybench iteration. Work that takes well under a microsecond is batched: the function
   * does `units` operations and the time is divided by `units`.
   */
  fn: () => unknown;
  /** Operations one call of `fn` performs (default 1). */
  units?: number;
  /** Called once before each tinybench phase (warmup, run) of the task, outside the timing. */
  beforeEachPhase?: () => void;
}

/** How long to measure. */
export interface RoundOptions {
  rounds: number;
  /** tinybench time budget per task per round, ms. */
  timeMs: number;
  /** tinybench warmup budget per task per round, ms. */
  warmupMs: number;
}

/** Microseconds per operation of each task in each round (the median sample of that round). */
export type RoundTimings = Map<string, number[]>;

/**
 * Times `tasks` in `options.rounds` rounds; round `r` runs them starting at task `r mod n`.
 * Returns, per task name, one figure per round: tinybench's median latency divided by `units`,
 * in microseconds. Throws if a task throws.
 */
export async function interleavedRounds(
  tasks: readonly RoundTask[],
  options: RoundOptions,
): Promise<RoundTimings> {
  const timings: RoundTimings = new Map(tasks.map((t) => [t.name, []]));
  for (let round = 0; round < options.rounds; round++) {
    const bench = new Bench({
      time: options.timeMs,
      warmupTime: options.warmupMs,
      // Few but long iterations (a whole run) are fine: the round's time budget decides.
      iterations: 5,
      warmupIterations: 2,
      throws: true,
    });
    for (let i = 0; i < tasks.length; i++) {
      const task = tasks[(round + i) % tasks.length]!;
      const hook = task.beforeEachPhase;
      bench.add(task.name, task.fn, hook ? { beforeAll: () => hook() } : {});
    }
    await bench.run();
    for (const t of bench.tasks) {
      const result = t.result;
      if (result.state !== 'completed') {
        throw new Error(`benchmark task "${t.name}" ended ${result.state}`);
      }
      const units = tasks.find((x) => x.name === t.name)?.units ?? 1;
      timings.get(t.name)!.push((result.latency.p50 * 1000) / units);
    }
  }
  return timings;
}
