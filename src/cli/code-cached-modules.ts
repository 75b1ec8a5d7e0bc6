/**
 * How the built CLI loads its own code fast: its CommonJS files (the bundle's chunks, the vendored
 * packages), each compiled with a V8 code cache, so that a process skips parsing and compiling
 * what an earlier one compiled. Node 22 offers this for every module (`module.enableCompileCache`);
 * Node 20, which Dirigent supports, only through `vm.Script`'s `cachedData`, used here.
 *
 * A cache is V8's compiled code of one file, made after the process used it (so it holds the
 * functions that ran, not only the top level), kept under a key folder that names what it is
 * valid for: the build (`buildId`: the bundle's files), Node's version, platform and architecture.
 * Within it a file's cache is named after the file, its size and its modification time, so that a
 * file changed since the build (edited by hand) is never served code compiled from other text.
 * V8 checks the rest itself (its version, its flags, the source's length) and rejects a cache that
 * does not match; a rejected or missing cache is made again when the process exits (so a process
 * started with other V8 flags, `--jitless` say, remakes the caches it was refused).
 *
 * Nothing here is needed for correctness: a cache that cannot be read or written is no cache, and
 * the file is compiled as Node would.
 */
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import Module, { createRequire } from 'node:module';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { Script } from 'node:vm';

/** What to load and where its caches go. */
export interface CodeCachedModulesOptions {
  /**
   * Folders of CommonJS files (`.cjs`) this loader compiles: a file of one of them that requires
   * another (`./chunk-X.cjs`, or an absolute path) gets it through this loader too. Any other
   * `require` (Node's modules, packages) is Node's.
   */
  dirs: readonly string[];
  /**
   * Folders that hold caches, in order: a file's cache is read from the first that has one, and
   * written to the first that can be written (the package's own folder, then the user's cache).
   */
  cacheDirs: readonly string[];
  /** What the caches are valid for, a folder name: see {@link codeCacheKey}. */
  key: string;
}

/** How a file's cache served it: found and taken, made on exit (none yet), or refused by V8. */
export type CacheUse = 'used' | 'missing' | 'rejected';

/**
 * The key folder of the caches of build `buildId` on this Node: V8's code depends on its version
 * (Node's) and on the machine's architecture.
 */
export function codeCacheKey(buildId: string): string {
  return `${buildId}-node${process.version.slice(1)}-${process.platform}-${process.arch}`;
}

/** A file compiled here, with what its cache did. */
interface Loaded {
  module: Module;
  script: Script;
  cacheName: string;
  cache: CacheUse;
}

/**
 * CommonJS files loaded with V8 code caches (see the module comment). Each file is loaded once
 * and registered in `require.cache` under its path, as Node registers the files it loads.
 *
 * ```ts
 * const modules = new CodeCachedModules({ dirs: [bundle], cacheDirs: [cache], key });
 * process.once('exit', () => modules.saveCaches());
 * modules.require(join(bundle, 'dirigent.cjs'));
 * ```
 */
export class CodeCachedModules {
  private readonly loaded = new Map<string, Loaded>();
  /** The key's folder in each of the cache folders, in their order. */
  private readonly cacheFolders: readonly string[];
  /** Node's `require` for the files of a folder (packages resolve alike for all of them). */
  private readonly nodeRequires = new Map<string, NodeJS.Require>();
  /** Where files are read (see {@link read}). */
  private scratch: Buffer = Buffer.alloc(0);

  constructor(private readonly options: CodeCachedModulesOptions) {
    this.cacheFolders = options.cacheDirs.map((dir) => join(dir, options.key));
  }

  /** Loads `file` (an absolute path in one of the folders) once, and returns its exports. */
  require(file: string): unknown {
    const known = this.loaded.get(file);
    if (known !== undefined) return known.module.exports;
    const fd = openSync(file, 'r');
    let source: string;
    let cacheName: string;
    try {
      const { size, mtimeMs } = fstatSync(fd);
      cacheName = `${basename(file)}-${size}-${Math.trunc(mtimeMs)}.cache`;
      // The build writes ASCII (esbuild's default charset), which UTF-8 decodes to V8's compact
      // one-byte strings; other text is decoded right too.
      source = this.read(fd, size).toString('utf8');
    } finally {
      closeSync(fd);
    }
    // In the scratch buffer: V8 has read it by the time the Script is made.
    const cachedData = this.readCache(cacheName);
    // Node's CommonJS wrapper, on the first line: line numbers in stacks stay the file's.
    const script = new Script(
      `(function (exports, require, module, __filename, __dirname) {${source}\n})`,
      { filename: file, ...(cachedData !== undefined && { cachedData }) },
    );
    const cache: CacheUse =
      cachedData === undefined ? 'missing' : script.cachedDataRejected ? 'rejected' : 'used';
    const nodeRequire = this.nodeRequireIn(dirname(file));
    const module = new Module(file);
    module.filename = file;
    nodeRequire.cache[file] = module;
    // Registered before it runs: a file that requires one that requires it back gets the
    // exports made so far, as Node's loader gives.
    this.loaded.set(file, { module, script, cacheName, cache });
    const requireHere = Object.assign(
      (id: string): unknown => {
        const path = this.ownFile(id, dirname(file));
        return path === undefined ? nodeRequire(id) : this.require(path);
      },
      { resolve: nodeRequire.resolve, cache: nodeRequire.cache, main: nodeRequire.main },
    );
    const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
    wrapper.call(module.exports, module.exports, requireHere, module, file, dirname(file));
    module.loaded = true;
    return module.exports;
  }

  /** Each file loaded so far (its path) and how its cache served it. */
  cacheUse(): Map<string, CacheUse> {
    return new Map([...this.loaded].map(([file, l]) => [file, l.cache]));
  }

  /**
   * Writes the cache of every file loaded without a usable one, as compiled by now (call it when
   * the work is done, at exit: the functions that ran are in it). Never throws.
   */
  saveCaches(): void {
    const unsaved = [...this.loaded.values()].filter((l) => l.cache !== 'used');
    if (unsaved.length === 0) return;
    for (const folder of this.cacheFolders) {
      try {
        mkdirSync(folder, { recursive: true });
        for (const l of unsaved) writeAtomically(join(folder, l.cacheName), l.script);
        return;
      } catch {
        // Not writable (a package installed by another user): the next folder.
      }
    }
  }

  /**
   * The cache named `name` from the first folder that has it, if any, in the scratch buffer (see
   * {@link read}).
   */
  private readCache(name: string): Buffer | undefined {
    for (const folder of this.cacheFolders) {
      let fd: number;
      try {
        fd = openSync(`${folder}${sep}${name}`, 'r');
      } catch {
        continue; // not there (or not readable): the next folder
      }
      try {
        return this.read(fd, fstatSync(fd).size);
      } catch {
        // Unreadable: as if it were not there.
      } finally {
        closeSync(fd);
      }
    }
    return undefined;
  }

  /**
   * The first `size` bytes of file `fd`, in a buffer this loader reuses for every file (valid
   * until the next read): fresh memory costs a page fault a page, which some virtual machines
   * make dear, and a start reads a megabyte or two.
   */
  private read(fd: number, size: number): Buffer {
    if (this.scratch.length < size) this.scratch = Buffer.allocUnsafeSlow(Math.max(size, 1 << 18));
    let done = 0;
    while (done < size) {
      const n = readSync(fd, this.scratch, done, size - done, done);
      if (n === 0) break;
      done += n;
    }
    return this.scratch.subarray(0, done);
  }

  /** Node's `require` as a file of `dir` has it: one per folder, made on first use. */
  private nodeRequireIn(dir: string): NodeJS.Require {
    let found = this.nodeRequires.get(dir);
    if (found === undefined) {
      found = createRequire(`${dir}${sep}`); // a folder's path ends with a separator
      this.nodeRequires.set(dir, found);
    }
    return found;
  }

  /** The path `id` names when it is a `.cjs` file of one of the folders, else undefined. */
  private ownFile(id: string, from: string): string | undefined {
    if (!id.endsWith('.cjs')) return undefined;
    const path = isAbsolute(id) ? id : id.startsWith('.') ? join(from, id) : undefined;
    if (path === undefined) return undefined;
    return this.options.dirs.some((dir) => directlyIn(dir, path)) ? path : undefined;
  }
}

/** Whether `path` names a file right in `dir` (not in a folder below it). */
function directlyIn(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith('..') && !rel.includes(sep) && !isAbsolute(rel);
}

/** Writes `script`'s code cache to `file` whole: through a file of its own, then renamed. */
function writeAtomically(file: string, script: Script): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, script.createCachedData());
    renameSync(temporary, file);
  } catch (err) {
    rmSync(temporary, { force: true });
    throw err;
  }
}
