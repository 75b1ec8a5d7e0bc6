/**
 * The CLI starts fast: `dirigent --version` and `--help` load commander and the commands'
 * registrations only, and an embedded `dirigent run` loads what running needs and none of the
 * Redis, HTTP, MCP, telemetry, search, Python host or Deno code, nor the packages only some
 * directives need (`ON_DEMAND`), which the directives that need them load. Each test spawns the
 * built CLI with `--import` of a small hook (written to a temporary folder) that lists every module
 * the process loaded: ES modules through a loader hook, CommonJS ones from the require cache at
 * exit. The CLI users run is the bin (`dist/cli/main.js`) and the bundle it loads
 * (`dist/cli-bundle/`, packages loaded on demand from `dist/vendor/`), each file of which it
 * registers in the require cache as Node does; what each command loads module by module is
 * checked on the CLI as tsc built it (`dist/src/`), whose modules the bundle splits along the same
 * lines. The bin compiles those files with V8 code caches, made by the build and by the first
 * process that finds one missing, and used by the next ones.
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeCacheKey } from '../../src/cli/code-cached-modules.js';
import { CLI_MAIN, CLI_SOURCES_MAIN, DIRECTIVES, REPO_ROOT } from '../support/paths.js';

/** Registers the loader below and, at exit, appends the require cache to `$LOADED_MODULES_FILE`. */
const HOOK = `
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
const file = process.env.LOADED_MODULES_FILE;
register('./loader.mjs', import.meta.url, { data: { file } });
const cache = createRequire(import.meta.url).cache;
process.on('exit', () => appendFileSync(file, Object.keys(cache).map((f) => f + '\\n').join('')));
`;

/** Appends the URL of every module loaded through the ES module loader to the file. */
const LOADER = `
import { appendFileSync } from 'node:fs';
let file;
export function initialize(data) { file = data.file; }
export async function load(url, context, next) {
  appendFileSync(file, url + '\\n');
  return next(url, context);
}
`;

/** Packages no start-up of these commands may load. */
const NEVER = ['bullmq', 'ioredis', 'fastify', '@modelcontextprotocol', '@opentelemetry', 'pino'];

/**
 * Packages loaded only by what needs them: a `<schedule>` (cron-parser, luxon), YAML (front
 * matter, graphs, configuration), a key file (smol-toml), a fence the one-pass reader does not
 * take (fast-xml-parser), parameters or inputs a plain check does not accept (ajv), a pattern
 * to match (re2js).
 */
const ON_DEMAND = ['cron-parser', 'luxon', 'yaml', 'smol-toml', 'fast-xml-parser', 'ajv', 're2js'];

/** A directive with a `<schedule>`, run by hand. */
const SCHEDULED = `# Scheduled

\`\`\`xml
<directive name="scheduled" version="1.0.0">
  <metadata>
    <description>Runs at 03:00 in Berlin.</description>
    <schedule cron="0 3 * * *" timezone="Europe/Berlin"/>
  </metadata>
  <process>
    <step name="say">
      <execute item_type="tool" item_id="dirigent/util/echo">
        <param name="message" value="hi"/>
      </execute>
    </step>
  </process>
</directive>
\`\`\`
`;

/** A directive in YAML front matter, with no instructions (so no step). */
const FRONT_MATTER = '---\nname: front\nversion: 1.0.0\ndescription: Front matter only.\n---\n';

/** hello.md with a CDATA section, which only fast-xml-parser reads. */
const CDATA = (hello: string): string =>
  hello.replace('<category>examples</category>', '<category><![CDATA[examples]]></category>');

let root: string;
let project: string;
let hook: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'dirigent-cli-startup-'));
  project = join(root, 'project');
  mkdirSync(project);
  mkdirSync(join(root, 'user'));
  copyFileSync(join(DIRECTIVES, 'hello.md'), join(project, 'hello.md'));
  writeFileSync(join(project, 'scheduled.md'), SCHEDULED);
  writeFileSync(join(project, 'front.md'), FRONT_MATTER);
  writeFileSync(
    join(project, 'cdata.md'),
    CDATA(readFileSync(join(DIRECTIVES, 'hello.md'), 'utf8')),
  );
  writeFileSync(join(root, 'hook.mjs'), HOOK);
  writeFileSync(join(root, 'loader.mjs'), LOADER);
  hook = pathToFileURL(join(root, 'hook.mjs')).href;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Runs the bundled CLI with `args` in the test's project; its exit status, output, and what it loaded. */
function cli(...args: string[]): { status: number | null; stdout: string; loaded: string[] } {
  return cliAt(CLI_MAIN, ...args);
}

/** The files of the bundle and the vendored packages among `loaded`: what the bin compiles. */
function compiledByBin(loaded: readonly string[]): string[] {
  return loaded.filter((m) => /\/dist\/(cli-bundle|vendor)\/[^/]+\.cjs$/.test(m));
}

/** The code caches of the build in `dist` (its `cli-bundle/bundle.json`) on this Node, by name → modification time. */
function codeCaches(dist: string): Map<string, number> {
  const { buildId } = JSON.parse(readFileSync(join(dist, 'cli-bundle', 'bundle.json'), 'utf8')) as {
    buildId: string;
  };
  const dir = join(dist, 'cli-bundle', '.code-cache', codeCacheKey(buildId));
  if (!existsSync(dir)) return new Map();
  return new Map(readdirSync(dir).map((name) => [name, statSync(join(dir, name)).mtimeMs]));
}

/** The cache among `caches` of `file` (named after the file, its size and time), if any. */
function cacheOf(caches: Map<string, number>, file: string): string | undefined {
  return [...caches.keys()].find((name) => name.startsWith(`${basename(file)}-`));
}

/** {@link cli}, of the CLI module by module as tsc built it. */
function sources(...args: string[]): { status: number | null; stdout: string; loaded: string[] } {
  return cliAt(CLI_SOURCES_MAIN, ...args);
}

function cliAt(
  main: string,
  ...args: string[]
): { status: number | null; stdout: string; loaded: string[] } {
  return cliIn(project, main, ...args);
}

/** {@link cliAt}, in the project folder `cwd`. */
function cliIn(
  cwd: string,
  main: string,
  ...args: string[]
): { status: number | null; stdout: string; loaded: string[] } {
  const file = join(root, `loaded-${Math.random().toString(36).slice(2)}.txt`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DIRIGENT_USER_SPACE: join(root, 'user'),
    LOADED_MODULES_FILE: file,
    NO_COLOR: '1',
  };
  for (const k of Object.keys(env)) if (k.startsWith('OTEL_') || k === 'REDIS_URL') delete env[k];
  const r = spawnSync(process.execPath, ['--import', hook, main, ...args], {
    cwd,
    env,
    encoding: 'utf8',
  });
  const loaded = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  return { status: r.status, stdout: r.stdout, loaded };
}

/** The packages among `loaded` (`@scope/name` or `name`, bundled in `dist/vendor/` or not), each once. */
function packagesOf(loaded: readonly string[]): string[] {
  const names = loaded.map((m) => {
    const found = /node_modules\/((?:@[^/]+\/)?[^/]+)|\/dist\/vendor\/(.+)\.cjs$/.exec(m);
    return found?.[1] ?? found?.[2];
  });
  return [...new Set(names.filter((n): n is string => n !== undefined))].sort();
}

/** Dirigent's own modules among `loaded`, as paths under `dist/src/`. */
function ownModules(loaded: readonly string[]): string[] {
  return loaded.flatMap((m) => /\/dist\/src\/(.+\.js)$/.exec(m)?.[1] ?? []);
}

describe('dirigent --version', () => {
  const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    version: string;
  };

  it("prints the package's version and exits 0, as --version and as -V", () => {
    for (const flag of ['--version', '-V']) {
      const r = cli(flag);
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(`${version}\n`);
    }
  });

  it('runs as a command: the bin is executable and names its interpreter (#!)', () => {
    const r = spawnSync(CLI_MAIN, ['--version'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${version}\n`);
  });

  it('still leaves `search --version <range>` to the search command', () => {
    const r = cli('search', '--version', '>=99', '--json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ results: [], total: 0 });
  });
});

describe('start-up of the bundled CLI', () => {
  it('--help loads no package (commander is in the bundle) and few files', () => {
    const r = cli('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: dirigent');
    expect(packagesOf(r.loaded)).toEqual([]);
    expect(r.loaded.filter((m) => m.includes('/dist/cli-bundle/')).length).toBeLessThan(10);
  });

  it('an embedded run loads what it needs, each package on demand as one file, and nothing of Redis, HTTP, MCP or telemetry', () => {
    const r = cli('run', 'hello.md', '--json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: 'completed',
      outputs: { greeting: 'Hello, world!' },
    });
    const vendored = r.loaded.filter((m) => m.includes('/dist/vendor/'));
    expect(packagesOf(vendored)).toEqual(['jsonata', 'xstate']);
    expect(r.loaded.filter((m) => m.includes('/node_modules/'))).toEqual([]);
    // Fewer files to find and read than the same run module by module.
    const files = (loaded: string[]) => loaded.filter((m) => !m.startsWith('node:')).length;
    expect(files(r.loaded)).toBeLessThan(files(sources('run', 'hello.md', '--json').loaded) / 2);
  });

  it('a directive that needs a package loads its bundled file, and runs', () => {
    const r = cli('run', 'front.md', '--json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'completed', directive: 'front' });
    expect(r.loaded).toContainEqual(expect.stringMatching(/\/dist\/vendor\/yaml\.cjs$/));
  });

  it('an embedded run finds a code cache, made by the build, for every file the bin compiles, and writes none', () => {
    const dist = join(REPO_ROOT, 'dist');
    const before = codeCaches(dist);
    const r = cli('run', 'hello.md', '--json');
    expect(r.status).toBe(0);
    const compiled = compiledByBin(r.loaded);
    expect(compiled.length).toBeGreaterThan(2);
    const after = codeCaches(dist);
    for (const file of compiled) {
      const name = cacheOf(before, file);
      expect(name, `no code cache of ${file}`).toBeDefined();
      expect(after.get(name!), `the cache of ${file} was made again`).toBe(before.get(name!));
    }
  });

  it('a new copy of the built CLI makes its code caches on its first run, and uses them on the next', () => {
    const copy = join(root, 'copy');
    mkdirSync(copy);
    copyFileSync(join(REPO_ROOT, 'package.json'), join(copy, 'package.json'));
    cpSync(join(REPO_ROOT, 'system'), join(copy, 'system'), { recursive: true });
    for (const part of ['cli', 'cli-bundle', 'vendor'])
      cpSync(join(REPO_ROOT, 'dist', part), join(copy, 'dist', part), {
        recursive: true,
        filter: (from) => basename(from) !== '.code-cache',
      });
    const dist = join(copy, 'dist');
    expect(codeCaches(dist).size).toBe(0);

    const first = cliIn(project, join(dist, 'cli', 'main.js'), 'run', 'hello.md', '--json');
    expect(first.status).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ outputs: { greeting: 'Hello, world!' } });
    const made = codeCaches(dist);
    const compiled = compiledByBin(first.loaded);
    expect(compiled.every((file) => file.startsWith(dist))).toBe(true);
    for (const file of compiled) expect(cacheOf(made, file), file).toBeDefined();

    const next = cliIn(project, join(dist, 'cli', 'main.js'), 'run', 'hello.md', '--json');
    expect(next.status).toBe(0);
    expect(JSON.parse(next.stdout)).toMatchObject({ outputs: { greeting: 'Hello, world!' } });
    expect(codeCaches(dist)).toEqual(made);
  });
});

describe('start-up, module by module', () => {
  it('--help loads commander and the registrations of the commands, nothing else', () => {
    const r = sources('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: dirigent');
    expect(packagesOf(r.loaded)).toEqual(['commander']);
    for (const m of ownModules(r.loaded)) expect(m).toMatch(/^(cli\/[a-z-]+|package-info)\.js$/);
  });

  it('an embedded run loads the engine and no Redis, HTTP, MCP, telemetry, search, Python host or Deno code', () => {
    const r = sources('run', 'hello.md', '--json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: 'completed',
      outputs: { greeting: 'Hello, world!' },
    });
    const packages = packagesOf(r.loaded);
    // What a run needs is seen, ES modules and CommonJS alike: the hook misses nothing.
    expect(packages).toEqual(expect.arrayContaining(['xstate', 'jsonata', 'commander']));
    expect(ownModules(r.loaded)).toContain('engine/engine.js');
    for (const p of NEVER) expect(packages).not.toContain(p);
    for (const p of ON_DEMAND) expect(packages).not.toContain(p);
    // Of the Redis side's modules, only the one that reads a Redis URL from the options or REDIS_URL.
    expect(
      ownModules(r.loaded).filter((m) =>
        /^(redis|api|mcp|search|worker|workers)\/|deno|python-host/.test(m),
      ),
    ).toEqual(['redis/redis-url.js']);
  });

  it('a directive with a <schedule> loads cron-parser, and runs', () => {
    const r = sources('run', 'scheduled.md', '--json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'completed', directive: 'scheduled' });
    // luxon, which cron-parser uses, is in cron-parser's bundled file.
    expect(packagesOf(r.loaded)).toContain('cron-parser');
    expect(packagesOf(r.loaded)).not.toContain('yaml');
  });

  it('a front-matter directive loads yaml, and runs', () => {
    const r = sources('run', 'front.md', '--json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'completed', directive: 'front' });
    expect(packagesOf(r.loaded)).toContain('yaml');
    expect(packagesOf(r.loaded)).not.toContain('cron-parser');
  });

  it('a fence the one-pass reader does not take is read by fast-xml-parser, and runs', () => {
    const r = sources('run', 'cdata.md', '--json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: 'completed',
      outputs: { greeting: 'Hello, world!' },
    });
    expect(packagesOf(r.loaded)).toContain('fast-xml-parser');
  });

  it('inputs a plain check does not take are checked by ajv, which says what is wrong', () => {
    const r = sources('run', 'hello.md', '--json', '--input', 'nme=x');
    expect(r.status).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: 'invalid',
      error: { code: 'INVALID_INPUTS', message: expect.stringContaining('unknown input "nme"') },
    });
    expect(packagesOf(r.loaded)).toContain('ajv');
  });

  it('search loads the search index only when it is asked for', () => {
    const r = sources('search', 'hello', '--json');
    expect(r.status).toBe(0);
    expect(ownModules(r.loaded)).toContain('search/item-index.js');
    for (const p of NEVER) expect(packagesOf(r.loaded)).not.toContain(p);
  });
});
