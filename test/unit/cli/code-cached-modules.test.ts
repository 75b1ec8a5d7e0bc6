/**
 * The bin's loader: CommonJS files of its folders compiled with V8 code caches. A file is loaded
 * once, the files of its folders it requires through the loader, anything else through Node; a
 * cache is made when the work is done, written to the first folder that takes it, and used by the
 * next process; a cache never serves a file changed since it was made, and one V8 refuses is
 * replaced. What a cache on disk does shows in a new process only (V8 keeps what it compiled for
 * the life of one), so those tests load in processes of their own.
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CodeCachedModules,
  codeCacheKey,
  type CacheUse,
  type CodeCachedModulesOptions,
} from '../../../src/cli/code-cached-modules.js';
import { REPO_ROOT } from '../../support/paths.js';

/** The loader as tsc built it, for the processes below. */
const LOADER = join(REPO_ROOT, 'dist', 'src', 'cli', 'code-cached-modules.js');

let root: string;
let bundle: string;
let vendor: string;
let cache: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'dirigent-code-cache-'));
  bundle = join(root, 'bundle');
  vendor = join(root, 'vendor');
  cache = join(root, 'cache');
  mkdirSync(bundle);
  mkdirSync(vendor);
});

afterEach(() => {
  const loaded = createRequire(import.meta.url).cache;
  for (const file of Object.keys(loaded)) if (file.startsWith(root)) delete loaded[file];
  rmSync(root, { recursive: true, force: true });
});

/** The options of a loader of the test's folders, its caches under the test's `cache`. */
function loaderOptions(options: Partial<CodeCachedModulesOptions>): CodeCachedModulesOptions {
  return {
    dirs: [bundle, vendor],
    cacheDirs: [cache],
    key: codeCacheKey('test-build'),
    ...options,
  };
}

/** A loader of the test's folders, in this process. */
function loader(options: Partial<CodeCachedModulesOptions> = {}): CodeCachedModules {
  return new CodeCachedModules(loaderOptions(options));
}

/** The cache files written so far, by name, in every folder under `dir`. */
function cacheFiles(dir: string = cache): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) =>
    f.endsWith('.cache'),
  );
}

describe('loading', () => {
  it('runs a file once, with the files of its folders it requires through the loader, a circle getting the exports made so far', () => {
    writeFileSync(join(bundle, 'main.cjs'), 'exports.a = 1; exports.b = require("./b.cjs").b;');
    writeFileSync(
      join(bundle, 'b.cjs'),
      `const main = require("./main.cjs"); exports.b = "b saw a=" + main.a; exports.vendored = require(${JSON.stringify(join(vendor, 'v.cjs'))});`,
    );
    writeFileSync(
      join(vendor, 'v.cjs'),
      'globalThis.__vendorRuns = (globalThis.__vendorRuns ?? 0) + 1; module.exports = "v";',
    );
    const modules = loader();
    expect(modules.require(join(bundle, 'main.cjs'))).toEqual({ a: 1, b: 'b saw a=1' });
    expect(modules.require(join(bundle, 'b.cjs'))).toMatchObject({ vendored: 'v' });
    expect((globalThis as { __vendorRuns?: number }).__vendorRuns).toBe(1);
    expect([...modules.cacheUse().keys()].sort()).toEqual(
      [join(bundle, 'b.cjs'), join(bundle, 'main.cjs'), join(vendor, 'v.cjs')].sort(),
    );
    delete (globalThis as { __vendorRuns?: number }).__vendorRuns;
  });

  it('registers each file in require.cache under its path, loaded, as Node registers the files it loads', () => {
    writeFileSync(
      join(bundle, 'main.cjs'),
      'module.exports = { here: __filename, dir: __dirname };',
    );
    const file = join(bundle, 'main.cjs');
    expect(loader().require(file)).toEqual({ here: file, dir: bundle });
    const registered = createRequire(import.meta.url).cache[file];
    expect(registered).toMatchObject({ filename: file, loaded: true, exports: { here: file } });
  });

  it('leaves other requires to Node: its modules, packages, and files outside the folders or below them', () => {
    mkdirSync(join(bundle, 'deeper'));
    writeFileSync(join(bundle, 'deeper', 'd.cjs'), 'module.exports = "d";');
    writeFileSync(
      join(bundle, 'main.cjs'),
      'module.exports = { sep: require("node:path").sep, deeper: require("./deeper/d.cjs") };',
    );
    const modules = loader();
    expect(modules.require(join(bundle, 'main.cjs'))).toEqual({ sep: '/', deeper: 'd' });
    expect([...modules.cacheUse().keys()]).toEqual([join(bundle, 'main.cjs')]);
  });
});

/** What a process that loads `file` with a loader of `options` saw: the exports, each file's cache use. */
interface ProcessOutcome {
  exports: unknown;
  use: Record<string, CacheUse>;
}

/**
 * Loads `file` in a process of its own, as the bin does (caches saved at exit): V8 keeps what it
 * compiled for the life of a process, so only a new one shows what a cache on disk does. Uses the
 * loader as tsc built it (`npm test` builds first).
 */
function inProcess(file: string, options: Partial<CodeCachedModulesOptions> = {}): ProcessOutcome {
  const script = `
    import { CodeCachedModules } from ${JSON.stringify(pathToFileURL(LOADER).href)};
    const modules = new CodeCachedModules(${JSON.stringify(loaderOptions(options))});
    process.once('exit', () => modules.saveCaches());
    const exports = modules.require(${JSON.stringify(file)});
    console.log(JSON.stringify({ exports, use: Object.fromEntries(modules.cacheUse()) }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`the loading process failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as ProcessOutcome;
}

describe('code caches (each loader a process of its own)', () => {
  let file: string;
  beforeEach(() => {
    file = join(bundle, 'main.cjs');
    writeFileSync(file, 'function twice(x) { return 2 * x; } module.exports = twice(21);');
  });

  it('are made at exit, after the work, and used by the next process', () => {
    expect(inProcess(file)).toEqual({ exports: 42, use: { [file]: 'missing' } });
    expect(cacheFiles()).toHaveLength(1);
    expect(inProcess(file)).toEqual({ exports: 42, use: { [file]: 'used' } });
    expect(cacheFiles()).toHaveLength(1);
  });

  it('never serve a file changed since (other text of the same length): it is compiled from its text', () => {
    inProcess(file);
    writeFileSync(file, 'function twice(x) { return 3 * x; } module.exports = twice(21);');
    const { atime, mtime } = statSync(file);
    utimesSync(file, atime, new Date(mtime.getTime() + 1000));
    expect(inProcess(file)).toEqual({ exports: 63, use: { [file]: 'missing' } });
  });

  it('that V8 refuses are not used, and are replaced', () => {
    inProcess(file);
    const [name] = cacheFiles();
    writeFileSync(join(cache, name!), 'not a code cache');
    expect(inProcess(file)).toEqual({ exports: 42, use: { [file]: 'rejected' } });
    expect(inProcess(file)).toEqual({ exports: 42, use: { [file]: 'used' } });
  });

  it('are kept apart by key: another build, or another Node, does not see them', () => {
    inProcess(file);
    expect(inProcess(file, { key: codeCacheKey('another-build') }).use[file]).toBe('missing');
    expect(codeCacheKey('b')).toBe(
      `b-node${process.version.slice(1)}-${process.platform}-${process.arch}`,
    );
  });

  it('go to the first folder that can be written, and are read from the first that has them', () => {
    const blocked = join(root, 'a-file');
    writeFileSync(blocked, ''); // no folder can be made under a file
    const fallback = join(root, 'user-cache');
    inProcess(file, { cacheDirs: [blocked, fallback] });
    expect(cacheFiles(fallback)).toHaveLength(1);
    expect(inProcess(file, { cacheDirs: [cache, fallback] }).use[file]).toBe('used');
  });

  it('that cannot be written anywhere leave the work as it was', () => {
    const blocked = join(root, 'a-file');
    writeFileSync(blocked, '');
    const modules = loader({ cacheDirs: [blocked] });
    expect(modules.require(file)).toBe(42);
    expect(() => modules.saveCaches()).not.toThrow();
  });
});
