/**
 * The CLI's start-up: `dirigent --help` and an embedded one-step run (`dirigent run hello.md` in a
 * temporary copy of a project, no Redis), each a new process, against `node -e 0` spawned in the
 * same rounds. What a script or a batch user pays each time it starts the CLI.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchRow, withinRounds } from './bench-row.js';
import type { BenchSection } from './bench-section.js';
import { interleavedRounds } from './interleaved-rounds.js';

/** The goals: `--help` within this many times `node -e 0`; an embedded one-step run under this, µs. */
export const CLI_GOALS = { helpTimesNode: 2, embeddedRunUs: 200_000 } as const;

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
  const names = { node: 'node', help: 'help', run: 'run', unbundled: 'unbundled' };
  try {
    const t = await interleavedRounds(
      [
        { name: names.node, fn: () => spawnNode(['-e', '0'], project, env) },
        { name: names.help, fn: () => spawnNode([cli, '--help'], project, env) },
        { name: names.run, fn: () => spawnNode([cli, 'run', 'hello.md'], project, env) },
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
          `${runTimes.toFixed(2)}× \`node -e 0\` (+${runOverMs.toFixed(0)} ms)`,
          {
            text: `< ${CLI_GOALS.embeddedRunUs / 1000} ms`,
            met: (us) => us < CLI_GOALS.embeddedRunUs,
          },
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
          'over rounds). The CLI is the bundle `npm run build` makes (`dist/cli/`, see ' +
          "`scripts/bundle.mjs`): Dirigent's modules in a few files, split where a command's " +
          'module is loaded on demand, and each package loaded on demand bundled into one file ' +
          '(`dist/vendor/`): Node resolves and reads a few files instead of a few hundred. It ' +
          'registers its commands with their options and help only, and ' +
          "loads a command's modules when that command runs: `--help` loads commander and the " +
          'registrations; an embedded run loads the engine, the directive reader and the built-in ' +
          'tools, and none of BullMQ, ioredis, fastify, the MCP SDK, OpenTelemetry, the search ' +
          'index or the Deno sandbox (`test/e2e/cli-startup.test.ts` checks it).',
        'Packages only some directives need load when one does: cron-parser and luxon for a ' +
          '`<schedule>`, yaml for front matter, graphs and configuration, smol-toml for a key ' +
          'file, fast-xml-parser for a fence the one-pass reader does not take, ajv for ' +
          'parameters or inputs the plain check does not accept, re2js for a pattern. CommonJS ' +
          'packages (xstate, jsonata) are required, not imported: an import scans their text for ' +
          'exports first. `NODE_EXTRA_CA_CERTS`, when set, makes Node read a certificate file at ' +
          'every start, in every row (`node -e 0` took 21–24 ms without it and about 60 ms with it ' +
          'when DESIGN.md was written).',
      ],
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
