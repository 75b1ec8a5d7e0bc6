/**
 * A Python function tool called on a warm host of the {@link PythonHostPool}, against the same
 * call in a new Python process per call (the harness of `spawnPythonTool`, the runtime before the
 * pool).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPythonToolMetadata } from '../src/items/python-tool-metadata.js';
import { PythonHostPool } from '../src/runtimes/python-host/python-host-pool.js';
import { resolvePython } from '../src/runtimes/python-interpreter.js';
import { spawnPythonTool } from './spawn-python-tool.js';
import { benchRow, withinRounds } from './bench-row.js';
import type { BenchSection } from './bench-section.js';
import { interleavedRounds } from './interleaved-rounds.js';

/** The goals of a warm call: its latency, and how many times faster than a spawn it is. */
export const PYTHON_HOST_GOALS = { warmUs: 1000, timesFaster: 50 } as const;

const TOOL = `__executor_id__ = "rye/core/runtimes/python_function_runtime"

def execute(params, project_path):
    return {"success": True, "n": params["n"] + 1}
`;

/** Warm calls per timed iteration (one call is a few hundred µs: timer noise matters). */
const WARM_BATCH = 20;

/** Measures a warm call and a spawned call of a trivial RYE function tool. */
export async function pythonHostBench(options: { rounds: number }): Promise<BenchSection> {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-python-bench-'));
  const file = join(dir, 'increment.py');
  writeFileSync(file, TOOL);
  const python = await resolvePython(process.cwd());
  const pool = new PythonHostPool({ size: 1 });
  const signal = new AbortController().signal;
  const meta = await readPythonToolMetadata(file, python);
  const base = { python, file, itemId: 'bench/increment', projectDir: dir, signal };
  const check = (out: unknown, n: number) => {
    if ((out as { n?: unknown }).n !== n + 1)
      throw new Error(`wrong result ${JSON.stringify(out)}`);
  };
  const names = { warm: 'warm', spawn: 'spawn' };
  try {
    const t = await interleavedRounds(
      [
        {
          name: names.warm,
          units: WARM_BATCH,
          fn: async () => {
            for (let n = 0; n < WARM_BATCH; n++)
              check(await pool.call({ ...base, params: { n }, timeoutMs: 10_000 }), n);
          },
        },
        {
          name: names.spawn,
          fn: async () =>
            check(await spawnPythonTool({ ...base, meta, params: { n: 1 }, timeoutMs: 10_000 }), 1),
        },
      ],
      { rounds: options.rounds, timeMs: 400, warmupMs: 100 },
    );
    const warm = t.get(names.warm)!;
    const spawn = t.get(names.spawn)!;
    const faster = withinRounds(warm, spawn, (w, s) => s / w);
    const { warmUs, timesFaster } = PYTHON_HOST_GOALS;
    return {
      title: 'Python function tools: warm host against a process per call',
      rows: [
        benchRow(
          '`PythonHostPool.call`: a trivial RYE function tool on a warm host',
          warm,
          'calls/s',
          `**${faster.toFixed(0)}×** faster than a process per call`,
          {
            text: `< ${warmUs / 1000} ms and ≥ ${timesFaster}× faster than a spawn`,
            met: (us) => us < warmUs && faster >= timesFaster,
          },
        ),
        benchRow(
          '`spawnPythonTool`: the same call in a new Python process (harness, JSON on stdin)',
          spawn,
          'calls/s',
        ),
      ],
      notes: [
        `The tool is \`def execute(params, project_path): return {"success": True, "n": params["n"] + 1}\`, ` +
          `run with ${python}. A warm call is one JSON line each way over the host's pipes, a ` +
          '`stat` of the tool file (to reload it when it changes) and the call; the host was ' +
          'started before the timing. A spawned call starts the interpreter, imports the tool ' +
          '(bytecode cached) and prints the result; its process group is made and reaped as ' +
          'for any tool.',
      ],
    };
  } finally {
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
