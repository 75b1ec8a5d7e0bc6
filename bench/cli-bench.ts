/**
 * The CLI's start-up: `dirigent --help` and an embedded one-step run (`dirigent run hello.md` in a
 * temporary copy of a project, no Redis), each a new process, against `node -e 0` spawned in the
 * same rounds. What a script or a batch user pays each time it starts the CLI.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchRow, withinRounds } from './bench-row.js';
import type { BenchSection } from './bench-section.js';
import { interleavedRounds } from './interleaved-rounds.js';

/**
 * The goals: `--help` within this many times `node -e 0`; an embedded one-step run within this
 * many milliseconds more than `node -e 0` (the same machine, the same rounds).
 */
export const CLI_GOALS = { helpTimesNode: 2, embeddedRunOverNodeMs: 100 } as const;

/** Spawns `node args…` in `cwd` and resolves once it exits 0 (rejects otherwise). */
function spawnNode(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd, env }, (err, _stdout, stderr) =>
      err
        ? reject(new Error(`node ${args.join(' ')} failed: ${err.message}\n${stderr}`))
        : resolve(),
    );
  });
}

/**
 * A copy of the built CLI in `dir` (package.json, the system space, the bin, the bundle and the
 * vendored packages) that can keep no code cache: where the bin would write one is a file, in the
 * bundle's folder and as `XDG_CACHE_HOME`. Every start of it compiles every file it loads, as the
 * first start after an install does. Returns its bin and the environment to run it with.
 */
function uncachedCopy(
  dir: string,
  env: NodeJS.ProcessEnv,
): { main: string; env: NodeJS.ProcessEnv } {
  const root = process.cwd();
  mkdirSync(dir);
  copyFileSync(join(root, 'package.json'), join(dir, 'package.json'));
  cpSync(join(root, 'system'), join(dir, 'system'), { recursive: true });
  for (const part of ['cli', 'cli-bundle', 'vendor'])
    cpSync(join(root, 'dist', part), join(dir, 'dist', part), {
      recursive: true,
      filter: (from) => !from.endsWith('.code-cache'),
    });
  const blocked = join(dir, 'dist', 'cli-bundle', '.code-cache');
  writeFileSync(blocked, '');
  return { main: join(dir, 'dist', 'cli', 'main.js'), env: { ...env, XDG_CACHE_HOME: blocked } };
}

/** Measures the CLI's start-up in new processes. */
export async function cliBench(options: { rounds: number }): Promise<BenchSection> {
  const cli = join(process.cwd(), 'dist', 'cli', 'main.js');
  /** The same CLI as tsc built it, module by module, before `scripts/bundle.mjs`. */
  const sources = join(process.cwd(), 'dist', 'src', 'cli', 'main.js');
  const root = mkdtempSync(join(tmpdir(), 'dirigent-cli-bench-'));
  const project = join(root, 'project');
  const userSpace = join(root, 'user');
  mkdirSync(project);
  mkdirSync(userSpace);
  copyFileSync(join(process.cwd(), 'directives', 'hello.md'), join(project, 'hello.md'));
  // Telemetry off, an empty user space: the run is the same in every round and on every machine.
  const env: NodeJS.ProcessEnv = { ...process.env, DIRIGENT_USER_SPACE: userSpace, NO_COLOR: '1' };
  for (const k of Object.keys(env)) if (k.startsWith('OTEL_') || k === 'REDIS_URL') delete env[k];
  const uncached = uncachedCopy(join(root, 'uncached'), env);
  const names = {
    node: 'node',
    help: 'help',
    run: 'run',
    uncached: 'uncached',
    unbundled: 'unbundled',
  };
  try {
    const t = await interleavedRounds(
      [
        { name: names.node, fn: () => spawnNode(['-e', '0'], project, env) },
        { name: names.help, fn: () => spawnNode([cli, '--help'], project, env) },
        { name: names.run, fn: () => spawnNode([cli, 'run', 'hello.md'], project, env) },
        {
          name: names.uncached,
          fn: () => spawnNode([uncached.main, 'run', 'hello.md'], project, uncached.env),
        },
        {
          name: names.unbundled,
          fn: () => spawnNode([sources, 'run', 'hello.md'], project, env),
        },
      ],
      { rounds: options.rounds, timeMs: 1500, warmupMs: 300 },
    );
    const node = t.get(names.node)!;
    const help = t.get(names.help)!;
    const run = t.get(names.run)!;
    const uncachedRun = t.get(names.uncached)!;
    const unbundled = t.get(names.unbundled)!;
    const helpTimes = withinRounds(help, node, (s, b) => s / b);
    const runTimes = withinRounds(run, node, (s, b) => s / b);
    const runOverMs = withinRounds(run, node, (s, b) => s - b) / 1000;
    return {
      title: 'CLI start-up',
      rows: [
        benchRow('`node -e 0`: a Node process that does nothing', node, 'processes/s'),
        benchRow(
          '`dirigent --help`',
          help,
          'processes/s',
          `**${helpTimes.toFixed(2)}×** \`node -e 0\``,
          {
            text: `≤ ${CLI_GOALS.helpTimesNode}× \`node -e 0\``,
            met: () => helpTimes <= CLI_GOALS.helpTimesNode,
          },
        ),
        benchRow(
          '`dirigent run hello.md`: an embedded one-step run (a shell tool), no Redis',
          run,
          'runs/s',
          `**+${runOverMs.toFixed(0)} ms** over \`node -e 0\` (${runTimes.toFixed(2)}×)`,
          {
            text: `≤ \`node -e 0\` + ${CLI_GOALS.embeddedRunOverNodeMs} ms`,
            met: () => runOverMs <= CLI_GOALS.embeddedRunOverNodeMs,
          },
        ),
        benchRow(
          '… the same run without code caches (every file compiled, as at a first start)',
          uncachedRun,
          'runs/s',
          `+${(withinRounds(uncachedRun, node, (s, b) => s - b) / 1000).toFixed(0)} ms over \`node -e 0\`; the caches save ${(withinRounds(uncachedRun, run, (s, b) => s - b) / 1000).toFixed(0)} ms`,
        ),
        benchRow(
          '… the same run by the CLI unbundled (`dist/src/cli/main.js`, one file per module)',
          unbundled,
          'runs/s',
          `the bundle takes ${withinRounds(run, unbundled, (s, b) => s / b).toFixed(2)}× its time`,
        ),
      ],
      notes: [
        'Each figure is a new process, spawned and waited for (tinybench median per round, median ' +
          'over rounds); a margin over `node -e 0` is the median of the differences within each ' +
          'round, so that both sides ran under the same load. The CLI is what `npm run build` ' +
          'makes (see `scripts/bundle.mjs`): a small CommonJS bin (`dist/cli/main.js`) that loads ' +
          "the bundle (`dist/cli-bundle/`: Dirigent's modules in a few CommonJS files, split where " +
          "a command's module is loaded on demand) and each package loaded on demand, bundled " +
          'into one file (`dist/vendor/`): Node resolves and reads a few files instead of a few ' +
          'hundred. The bin compiles those files with V8 code caches (`src/cli/code-cached-' +
          "modules.ts`): V8's compiled code of each file, made by the build and by the first " +
          'process that finds one missing (another Node, a changed file), so that a start ' +
          'compiles almost nothing; the row without them is what a first start costs. The CLI ' +
          'registers its commands with their options and help only, and ' +
          "loads a command's modules when that command runs: `--help` loads commander and the " +
          'registrations; an embedded run loads the engine, the directive reader and the built-in ' +
          'tools, and none of BullMQ, ioredis, fastify, the MCP SDK, OpenTelemetry, the search ' +
          'index or the Deno sandbox (`test/e2e/cli-startup.test.ts` checks it, and that every ' +
          'file the bin compiles for an embedded run has its code cache).',
        'Packages only some directives need load when one does: cron-parser and luxon for a ' +
          '`<schedule>`, yaml for front matter, graphs and configuration, smol-toml for a key ' +
          'file, fast-xml-parser for a fence the one-pass reader does not take, ajv for ' +
          'parameters or inputs the plain check does not accept, re2js for a pattern. ' +
          '`NODE_EXTRA_CA_CERTS`, when set, makes Node read a certificate file at ' +
          'every start, in every row (`node -e 0` took 21–24 ms without it and about 60 ms with it ' +
          'when DESIGN.md was written).',
      ],
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
