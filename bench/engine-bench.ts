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
import { benchRow, withinRounds, type BenchRow } from './bench-row.js';
import { echoLoopDirective } from './echo-loop-directive.js';
import { echoSequenceDirective } from './echo-sequence-directive.js';
import type { GeneratedDirective } from './generated-directive.js';
import { interleavedRounds, type RoundOptions, type RoundTask } from './interleaved-rounds.js';

/** Goals per step: the engine's own overhead, and the rate. */
export const ENGINE_GOALS = { overheadUs: 20, stepsPerSecond: 50_000 } as const;

/** Sizes of the engine benchmark. */
export interface EngineBenchOptions extends RoundOptions {
  /** Iterations of the loop directive (a run takes one step more). */
  loopIterations: number;
  /** Steps of the sequential directive. */
  sequenceSteps: number;
  /** Direct calls per timed iteration of the baseline. */
  directBatch: number;
}

const ECHO_ID = 'dirigent/util/echo';

/** Measures the engine on a loop and on a long sequence, and the direct calls; returns rows. */
export async function engineBench(options: EngineBenchOptions): Promise<BenchRow[]> {
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
  const direct: RoundTask = {
    name: 'direct',
    units: options.directBatch,
    fn: async () => {
      for (let i = 0; i < options.directBatch; i++) await echo.execute({ i }, ctx);
    },
  };
  const t = await interleavedRounds(
    [engineTask('loop', loop, projectDir), engineTask('sequence', sequence, projectDir), direct],
    options,
  );
  const base = t.get('direct')!;
  const row = (name: string, rounds: number[]) => {
    const overhead = withinRounds(rounds, base, (s, b) => s - b);
    return benchRow(
      name,
      rounds,
      'steps/s',
      `${withinRounds(rounds, base, (s, b) => s / b).toFixed(0)}× a direct call; ` +
        `**+${overhead.toFixed(1)} µs/step** engine overhead`,
      {
        text: `overhead < ${ENGINE_GOALS.overheadUs} µs/step, ≥ ${ENGINE_GOALS.stepsPerSecond.toLocaleString('en-US')} steps/s`,
        met: (us) => overhead < ENGINE_GOALS.overheadUs && 1e6 / us >= ENGINE_GOALS.stepsPerSecond,
      },
    );
  };
  return [
    row(`engine: echo step looped ${options.loopIterations.toLocaleString('en-US')} times via \`<next>\`, JSONata counter`, t.get('loop')!),
    row(`engine: ${options.sequenceSteps} sequential echo steps, one template param each`, t.get('sequence')!),
    benchRow('echo tool `execute` awaited directly, in a loop', base, 'calls/s'),
  ];
}

/**
 * One run of `directive` per iteration, on a fresh engine and `MemoryRunStore` per tinybench
 * phase (the store keeps every run; a long benchmark would otherwise time a growing heap).
 * Every run must complete with the expected number of steps.
 */
function engineTask(name: string, directive: GeneratedDirective, projectDir: string): RoundTask {
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
      if (record.status !== 'completed' || record.steps.length !== directive.steps) {
        throw new Error(
          `${directive.file}: run ${record.status} after ${record.steps.length} of ${directive.steps} steps` +
            (record.error ? `: ${record.error.code} ${record.error.message}` : ''),
        );
      }
    },
  };
}
