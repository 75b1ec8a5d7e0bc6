/**
 * The built-in search tools over a generated tree of 100,000 files against ripgrep (or `grep -r`
 * where rg is absent) in the same rounds, and the cost of one call of a native tool against the
 * same tool written in Python and run on the warm host, both through the `ItemDispatcher` a run
 * uses.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ItemResolver } from '../src/items/item-resolver.js';
import { SYSTEM_SPACE_ROOT } from '../src/items/space.js';
import { ItemDispatcher } from '../src/tools/item-dispatcher.js';
import { benchRow, withinRounds } from './bench-row.js';
import type { BenchSection } from './bench-section.js';
import { interleavedRounds } from './interleaved-rounds.js';
import { median } from './median.js';

/** Goal: the built-in glob and grep take at most twice what the baseline takes. */
export const TOOLS_GOAL = { timesBaseline: 2 } as const;

const WORDS = [
  'alpha',
  'beta',
  'gamma',
  'delta',
  'tempo',
  'coda',
  'score',
  'baton',
  'signal',
  'step',
];

/** Writes the tree: 1,000 folders of 100 files (a third of them ignored `.log` files). */
function generateTree(root: string, files: number): void {
  writeFileSync(join(root, '.gitignore'), '*.log\nnode_modules/\n');
  let n = 0;
  for (let a = 0; n < files; a++)
    for (let b = 0; b < 10 && n < files; b++)
      for (let c = 0; c < 10 && n < files; c++) {
        const dir = join(root, `pkg${a}`, `mod${b}`, `part${c}`);
        mkdirSync(dir, { recursive: true });
        for (let f = 0; f < 100 && n < files; f++, n++) {
          const lines = Array.from(
            { length: 20 },
            (_, l) => `const ${WORDS[(n + l) % 10]}_${l} = ${n * l}; // ${WORDS[(l * 7 + n) % 10]}`,
          );
          if (n % 997 === 0) lines.push('// TODO: tidy this module');
          writeFileSync(
            join(dir, `file${n}.${['ts', 'md', 'log'][f % 3]}`),
            `${lines.join('\n')}\n`,
          );
        }
      }
}

const READ_TOOL = `__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python_function_runtime"
__tool_description__ = "Reads a file of the project"
CONFIG_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
from pathlib import Path
def execute(params, project_path):
    path = (Path(project_path) / params["path"]).resolve()
    if not path.is_relative_to(Path(project_path).resolve()):
        return {"success": False, "error": "outside the project"}
    content = path.read_text()
    return {"success": True, "content": content, "size": len(content.encode())}
`;

/** What the baseline program is, and how it lists and searches the tree. */
function baseline(tree: string): { name: string; glob: () => number; grep: () => number } {
  const run = (cmd: string, args: string[]) => {
    // stdin closed: with a pipe there, rg would search it instead of the folder.
    const r = spawnSync(cmd, args, {
      cwd: tree,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (r.status !== 0 && r.status !== 1) throw new Error(`${cmd} failed: ${r.stderr}`);
    return r.stdout.split('\n').filter((l) => l !== '').length;
  };
  if (spawnSync('rg', ['--version']).status === 0) {
    return {
      name: '`rg` (ripgrep, its default threads, .gitignore read without a repository)',
      glob: () => run('rg', ['--files', '--no-require-git', '-g', '*.ts', '.']),
      grep: () => run('rg', ['-n', '--no-require-git', 'TODO: \\w+', '.']),
    };
  }
  return {
    name: '`grep -r` (ripgrep is not installed; the ignored files excluded by name)',
    glob: () => run('find', ['.', '-name', '*.ts', '-type', 'f']),
    grep: () =>
      run('grep', [
        '-rnE',
        '--exclude=*.log',
        '--exclude-dir=node_modules',
        'TODO: [A-Za-z0-9_]+',
        '.',
      ]),
  };
}

/** Measures the tree rows and the per-call row (see the module comment). */
export async function builtinToolsBench(options: {
  rounds: number;
  files?: number;
}): Promise<BenchSection> {
  const files = options.files ?? 100_000;
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'dirigent-tools-bench-')));
  const tree = join(root, 'tree');
  const project = join(root, 'project');
  mkdirSync(tree);
  mkdirSync(join(project, '.ai', 'tools', 'bench'), { recursive: true });
  writeFileSync(join(project, '.ai', 'tools', 'bench', 'read.py'), READ_TOOL);
  writeFileSync(join(project, 'note.txt'), 'a small file\n'.repeat(20));
  const started = performance.now();
  generateTree(tree, files);
  const generatedS = (performance.now() - started) / 1000;
  const items = new ItemResolver([
    { name: 'project', root: join(project, '.ai') },
    { name: 'system', root: SYSTEM_SPACE_ROOT },
  ]);
  const dispatcher = new ItemDispatcher(items);
  const signal = new AbortController().signal;
  const call = (itemId: string, params: Record<string, unknown>, dir: string) =>
    dispatcher.dispatch({
      itemId,
      params,
      projectDir: dir,
      runId: 'bench',
      step: 'bench',
      attempt: 1,
      signal,
    }) as Promise<Record<string, unknown>>;
  const base = baseline(tree);
  try {
    // Both sides must find the same, or the comparison means nothing.
    const globbed = await call('dirigent/fs/glob', { pattern: '*.ts', limit: 100_000 }, tree);
    const grepped = await call(
      'dirigent/fs/grep',
      { pattern: 'TODO: \\w+', max_matches: 10_000 },
      tree,
    );
    const [baseGlob, baseGrep] = [base.glob(), base.grep()];
    if (globbed.total !== baseGlob || grepped.count !== baseGrep)
      throw new Error(
        `the tools and the baseline disagree: glob ${String(globbed.total)}/${baseGlob}, grep ${String(grepped.count)}/${baseGrep}`,
      );
    const ms = {
      glob: [] as number[],
      rgGlob: [] as number[],
      grep: [] as number[],
      rgGrep: [] as number[],
    };
    const tasks: [keyof typeof ms, () => unknown][] = [
      ['glob', () => call('dirigent/fs/glob', { pattern: '*.ts', limit: 100_000 }, tree)],
      ['rgGlob', base.glob],
      [
        'grep',
        () => call('dirigent/fs/grep', { pattern: 'TODO: \\w+', max_matches: 10_000 }, tree),
      ],
      ['rgGrep', base.grep],
    ];
    for (let r = 0; r < options.rounds; r++) {
      for (let i = 0; i < tasks.length; i++) {
        const [name, fn] = tasks[(r + i) % tasks.length]!;
        const t0 = performance.now();
        await fn();
        ms[name].push((performance.now() - t0) * 1000);
      }
    }
    const perCall = await interleavedRounds(
      [
        { name: 'native', fn: () => call('dirigent/fs/read', { path: 'note.txt' }, project) },
        { name: 'python', fn: () => call('bench/read', { path: 'note.txt' }, project) },
      ],
      { rounds: options.rounds, timeMs: 300, warmupMs: 100 },
    );
    const ratio = (a: number[], b: number[]) => withinRounds(a, b, (s, x) => s / x);
    const goal = (r: number) => ({
      text: `≤ ${TOOLS_GOAL.timesBaseline}× the baseline`,
      met: () => r <= TOOLS_GOAL.timesBaseline,
    });
    const globRatio = ratio(ms.glob, ms.rgGlob);
    const grepRatio = ratio(ms.grep, ms.rgGrep);
    const native = perCall.get('native')!;
    const python = perCall.get('python')!;
    const faster = withinRounds(native, python, (n, p) => p / n);
    return {
      title: 'Built-in tools: search over 100,000 files, and one call against Python',
      rows: [
        benchRow(
          `\`dirigent/fs/glob\` \`*.ts\` over ${files.toLocaleString('en-US')} files`,
          ms.glob,
          'globs/s',
          `**${globRatio.toFixed(2)}×** the baseline`,
          goal(globRatio),
        ),
        benchRow(`baseline: ${base.name} listing the same`, ms.rgGlob, 'globs/s'),
        benchRow(
          `\`dirigent/fs/grep\` \`TODO: \\w+\` over the same files`,
          ms.grep,
          'greps/s',
          `**${grepRatio.toFixed(2)}×** the baseline`,
          goal(grepRatio),
        ),
        benchRow('baseline: the same search', ms.rgGrep, 'greps/s'),
        benchRow(
          '`dirigent/fs/read` of a small file, native (through `ItemDispatcher`)',
          native,
          'calls/s',
          `**${faster.toFixed(0)}×** faster than the Python tool`,
        ),
        benchRow('the same read as a RYE Python function tool on the warm host', python, 'calls/s'),
      ],
      notes: [
        `The tree (generated in ${generatedS.toFixed(0)} s) holds ${files.toLocaleString('en-US')} files of about 700 bytes in 1,000 folders; its \`.gitignore\` ignores a third of them (\`*.log\`). Both sides find ${globbed.total as number} \`.ts\` files and ${grepped.count as number} matching lines. Each of ${options.rounds} rounds times each of the four once, in a rotated order, and a ratio is the median of the per-round ones; the baseline is a process started for each search, as a shell step would start it, and uses every core (the built-in tools run in the event loop of one process and read files one at a time, yielding between batches).`,
        `Median per round, in ms: glob ${(median(ms.glob) / 1000).toFixed(0)} against ${(median(ms.rgGlob) / 1000).toFixed(0)}, grep ${(median(ms.grep) / 1000).toFixed(0)} against ${(median(ms.rgGrep) / 1000).toFixed(0)}.`,
        'A native call validates its parameters, resolves the path in the project and reads the file in this process; the Python call goes the whole way a project tool goes (its chain, its schema, the warm host, one JSON line each way).',
      ],
    };
  } finally {
    await dispatcher.close();
    items.close();
    rmSync(root, { recursive: true, force: true });
  }
}
