/**
 * Steps per second of the embedded engine running `dirigent/util/echo`, against awaiting the
 * same tool's `execute` directly: the difference is what the engine adds to every step.
 */
import { DirectiveLoader } from '../src/engine/directive-loader.js';
import { Engine } from '../src/engine/engine.js';
import { MemoryRunStore } from '../src/engine/memory-run-store.js';
import { BuiltinDispatcher } from '../src/tools/builtin-dispatcher.js';
import { BUILTIN_TOOLS } from '../src/tools/builtin/index.js';
import type { ToolContext } from '../src/tools/tool-definition.js';
import { benchRow, withinRounds } from './bench-row.js';
import type { BenchSection } from './bench-section.js';
import { echoLoopDirective } from './echo-loop-directive.js';
import { echoSequenceDirective } from './echo-sequence-directive.js';
import type { GeneratedDirective } from './generated-directive.js';
import { interleavedRounds, type RoundOptions, type RoundTask } from './interleaved-rounds.js';
import { xstateFloor } from './xstate-floor.js';

/** Goals per step: the engine's own overhead, and the rate. */
export const ENGINE_GOALS = { overheadUs: 20, stepsPerSecond: 50_000 } as const;

/** Sizes of the engine benchmark. */
export interface EngineBenchOptions extends RoundOptions {
  /** Iterations of the loop directive (a run takes one step more). */
  loopIterations: number;
  /** Steps of the sequential directive. */
  sequenceSteps: number;
  /** Direct calls (and xstate events) per timed iteration of the baselines. */
  directBatch: number;
}

const ECHO_ID = 'dirigent/util/echo';
/** More failed runs than this share stops the benchmark: the figures would mean nothing. */
const MAX_FAILED_SHARE = 0.01;

/** Runs that did not complete, by error. */
type Failures = Map<string, number>;

/** Measures the engine on a loop and on a long sequence, and the baselines. */
export async function engineBench(options: EngineBenchOptions): Promise<BenchSection> {
  const projectDir = process.cwd();
  const loop = echoLoopDirective(options.loopIterations);
  const sequence = echoSequenceDirective(options.sequenceSteps);
  const echo = BUILTIN_TOOLS.find((t) => t.itemId === ECHO_ID);
  if (echo === undefined) throw new Error(`no built-in tool ${ECHO_ID}`);
  const ctx: ToolContext = {
    projectDir,
    signal: new AbortController().signal,
    runId: 'bench',
    step: 'tick',
    attempt: 1,
  };
  const failures: Failures = new Map();
  const runs = { count: 0 };
  const t = await interleavedRounds(
    [
      engineTask('loop', loop, projectDir, failures, runs),
      engineTask('sequence', sequence, projectDir, failures, runs),
      {
        name: 'direct',
        units: options.directBatch,
        fn: async () => {
          for (let i = 0; i < options.directBatch; i++) await echo.execute({ i }, ctx);
        },
      },
      { name: 'xstate', units: options.directBatch, fn: xstateFloor(options.directBatch) },
    ],
    options,
  );
  const base = t.get('direct')!;
  const floor = t.get('xstate')!;
  const row = (name: string, rounds: number[]) => {
    const overhead = withinRounds(rounds, base, (s, b) => s - b);
    return benchRow(
      name,
      rounds,
      'steps/s',
      `${withinRounds(rounds, base, (s, b) => s / b).toFixed(0)}× a direct call; ` +
        `**+${overhead.toFixed(1)} µs/step** engine overhead; ` +
        `${withinRounds(rounds, floor, (s, f) => s / f).toFixed(1)}× the xstate floor`,
      {
        text: `overhead < ${ENGINE_GOALS.overheadUs} µs/step, ≥ ${ENGINE_GOALS.stepsPerSecond.toLocaleString('en-US')} steps/s`,
        met: (us) => overhead < ENGINE_GOALS.overheadUs && 1e6 / us >= ENGINE_GOALS.stepsPerSecond,
      },
    );
  };
  const failed = [...failures.values()].reduce((a, b) => a + b, 0);
  return {
    title: 'Embedded engine steps',
    rows: [
      row(
        `engine: echo step looped ${options.loopIterations.toLocaleString('en-US')} times via \`<next>\`, JSONata counter`,
        t.get('loop')!,
      ),
      row(
        `engine: ${options.sequenceSteps} sequential echo steps, one template param each`,
        t.get('sequence')!,
      ),
      benchRow('echo tool `execute` awaited directly, in a loop', base, 'calls/s'),
      benchRow(
        'xstate floor: live actor, one event running one `assign`',
        floor,
        'events/s',
        'reference',
      ),
    ],
    notes: [
      'Each engine run uses the real `Engine` with a `BuiltinDispatcher` and a `MemoryRunStore` ' +
        '(fresh per tinybench phase) and is timed whole: start, every step, the end-of-run save. ' +
        'µs per op is per step. The xstate floor is the least one transition costs; every step ' +
        'makes at least one.',
      failed === 0
        ? `All ${runs.count.toLocaleString('en-US')} runs completed.`
        : `**${failed} of ${runs.count.toLocaleString('en-US')} runs failed** (counted in the timings): ` +
          [...failures].map(([why, n]) => `${n}× ${why}`).join('; ') +
          '.',
    ],
  };
}

/**
 * One run of `directive` per iteration, on a fresh engine and `MemoryRunStore` per tinybench
 * phase (the store keeps every run; a long benchmark would otherwise time a growing heap). A run
 * that does not complete with the expected steps is counted in `failures`; more than
 * {@link MAX_FAILED_SHARE} of them stops the benchmark.
 */
function engineTask(
  name: string,
  directive: GeneratedDirective,
  projectDir: string,
  failures: Failures,
  runs: { count: number },
): RoundTask {
  const loader = new DirectiveLoader(projectDir);
  const loaded = loader.fromText(directive.file, directive.text);
  let engine: Engine | undefined;
  return {
    name,
    units: directive.steps,
    beforeEachPhase: () => {
      engine = new Engine({
        projectDir,
        dispatcher: new BuiltinDispatcher(),
        loader,
        store: new MemoryRunStore(),
        env: {},
      });
    },
    fn: async () => {
      const record = await engine!.run(loaded, {});
      runs.count++;
      if (record.status === 'completed' && record.steps.length === directive.steps) return;
      const why = record.error
        ? `${record.error.code}: ${record.error.message}`
        : `${record.status} after ${record.steps.length} of ${directive.steps} steps`;
      failures.set(why, (failures.get(why) ?? 0) + 1);
      const failed = [...failures.values()].reduce((a, b) => a + b, 0);
      if (failed > 3 && failed > runs.count * MAX_FAILED_SHARE) {
        throw new Error(`${directive.file}: ${failed} of ${runs.count} runs failed, last: ${why}`);
      }
    },
  };
}
