/**
 * A call of a trivial TS tool in the Deno sandbox: served by a warm host, against spawning a fresh
 * `deno run` with the same flags for the same call (what a process per call would cost).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readJsToolMetadata } from '../src/items/js-tool-metadata.js';
import { denoArgs, denoEnvironment, type DenoHostSpec } from '../src/runtimes/deno/deno-args.js';
import { resolveDeno } from '../src/runtimes/deno/deno-binary.js';
import { denoCacheRoot } from '../src/runtimes/deno/deno-cache-dir.js';
import { DenoSandbox } from '../src/runtimes/deno/deno-sandbox.js';
import type { DenoToolCall } from '../src/runtimes/deno/deno-tool-call.js';
import { runProcess } from '../src/runtimes/run-process.js';
import { benchRow, withinRounds } from './bench-row.js';
import type { BenchSection } from './bench-section.js';
import { interleavedRounds } from './interleaved-rounds.js';
import { median } from './median.js';

/** The goals set for warm tool hosts (the issue states them for Python). */
export const DENO_GOALS = { warmCallUs: 1000, speedup: 50 } as const;

const TOOL = `export const description = 'Adds two numbers';
export const input_schema = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
} as const;

export function execute(input: { a: number; b: number }): { sum: number } {
  return { sum: input.a + input.b };
}
`;

// Imports the tool, calls it once with the input on stdin, prints the result: a cold call.
const ONE_SHOT = `const input = JSON.parse(await new Response(Deno.stdin.readable).text());
const mod = await import(Deno.args[0]);
console.log(JSON.stringify(await mod.execute(input, { projectPath: Deno.cwd(), secrets: {} })));
`;

/** Measures a warm sandbox call and a fresh `deno run` per call, in interleaved rounds. */
export async function denoBench(options: { rounds: number }): Promise<BenchSection> {
  const project = mkdtempSync(join(tmpdir(), 'dirigent-deno-bench-'));
  const sandbox = new DenoSandbox();
  try {
    const file = join(project, 'add.ts');
    const oneShot = join(project, 'one-shot.js');
    writeFileSync(file, TOOL);
    writeFileSync(oneShot, ONE_SHOT);
    const meta = await readJsToolMetadata(file);
    const input = { a: 1, b: 2 };
    const call: DenoToolCall = {
      file,
      itemId: 'bench/add',
      meta,
      input,
      projectDir: project,
      secrets: {},
      signal: new AbortController().signal,
      timeoutMs: 30_000,
    };
    const root = denoCacheRoot(project);
    const spec: DenoHostSpec = {
      deno: await resolveDeno(),
      harness: oneShot,
      denoDir: join(root, 'cache'),
      toolFile: file,
      format: 'dirigent',
      projectDir: project,
      readPaths: [project],
      writePaths: [project],
      network: false,
      memoryMb: meta.limits.memoryMb ?? 128,
    };
    const args = denoArgs(spec).slice(0, -1); // the one-shot script takes the tool URL only
    const env = denoEnvironment(spec.denoDir);
    const check = (result: unknown) => {
      if ((result as { sum?: number }).sum !== 3)
        throw new Error(`bad result ${JSON.stringify(result)}`);
    };
    check(await sandbox.run(call)); // the first call starts the host and fills Deno's cache
    const names = { warm: 'warm', spawn: 'spawn' };
    const t = await interleavedRounds(
      [
        { name: names.warm, fn: async () => check(await sandbox.run(call)) },
        {
          name: names.spawn,
          fn: async () => {
            const out = await runProcess({
              file: spec.deno,
              args,
              cwd: project,
              env,
              input: JSON.stringify(input),
              timeoutMs: 30_000,
              signal: call.signal,
              label: 'deno run',
            });
            if (out.exitCode !== 0) throw new Error(`deno run failed: ${out.stderr}`);
            check(JSON.parse(out.stdout));
          },
        },
      ],
      { rounds: options.rounds, timeMs: 400, warmupMs: 100 },
    );
    const warm = t.get(names.warm)!;
    const spawn = t.get(names.spawn)!;
    const speedup = withinRounds(warm, spawn, (w, s) => s / w);
    return {
      title: 'JS/TS tools in the Deno sandbox',
      rows: [
        benchRow(
          '`DenoSandbox.run`: a trivial TS tool on its warm Deno host (JSON lines over pipes)',
          warm,
          'calls/s',
          `**${speedup.toFixed(0)}× faster** than a fresh \`deno run\``,
          {
            text: `< ${DENO_GOALS.warmCallUs / 1000} ms, ≥ ${DENO_GOALS.speedup}× a spawn`,
            met: (us) => us < DENO_GOALS.warmCallUs && speedup >= DENO_GOALS.speedup,
          },
        ),
        benchRow(
          'fresh `deno run` with the same flags per call: start, import the tool, call, exit',
          spawn,
          'calls/s',
        ),
      ],
      notes: [
        'Both sides run the same tool with the same permission flags, V8 heap limit and warm ' +
          `\`DENO_DIR\` (so the spawn does not transpile). The spawn takes ${(median(spawn) / 1000).toFixed(0)} ms: ` +
          "Deno's start-up, which a warm host pays once. The warm call is one JSON line each way " +
          'between Node and the harness, plus the pool bookkeeping; metadata is read once ' +
          'before (the reader caches it by content hash).',
      ],
    };
  } finally {
    await sandbox.close();
    rmSync(project, { recursive: true, force: true });
  }
}
