/** Listing the files under a folder of the project, as the search tools see them. */
import { join, sep } from 'node:path';
import type * as FdirPackage from 'fdir';
import { lazyPackage } from '../lazy-package.js';
import { abortError } from './abort-error.js';
import { IgnoreStack } from './ignore-stack.js';

const fdirPackage = lazyPackage<typeof FdirPackage>('fdir');

/** What {@link walkProject} lists. */
export interface WalkOptions {
  /** Absolute path of the project. */
  projectDir: string;
  /** The project-relative folder to list below, with `/` ('' for the whole project). */
  start: string;
  /** List ignored files too (the ignore stack is not read). */
  noIgnore: boolean;
  /** Lists only the files whose path below `start` passes (default: all). */
  keep?: (pathBelowStart: string) => boolean;
  signal: AbortSignal;
}

/**
 * The project-relative paths (with `/`) of the regular files below `start` that `keep` keeps,
 * sorted (only those: a glob sorts its matches, not the tree), passing over
 * what the {@link IgnoreStack} ignores (whole folders at once) unless `noIgnore`. Symbolic links
 * are neither listed nor followed, as ripgrep does by default: a link cannot take a search out of
 * the project, nor list a file twice. The walk is fdir's, asynchronous, so the event loop keeps
 * serving while it runs; an abort of `signal` stops it and rejects with the abort's reason.
 */
export async function walkProject(options: WalkOptions): Promise<string[]> {
  const { projectDir, start, signal } = options;
  const root = join(projectDir, start);
  const prefix = start === '' ? '' : `${start}/`;
  const stack = options.noIgnore ? undefined : IgnoreStack.forWalk(projectDir, start);
  // fdir hands `exclude` the folder's absolute path with a trailing separator.
  const rootLength = root.length + (root.endsWith(sep) ? 0 : 1);
  const crawler = new (fdirPackage().fdir)({ excludeSymlinks: true })
    .withRelativePaths()
    .withAbortSignal(signal);
  // `keep` first: it is cheaper than the ignore stack, and fdir stops at the first filter saying no.
  const keep = options.keep;
  if (keep !== undefined) crawler.filter((path, isDir) => isDir || keep(path));
  if (stack !== undefined) {
    crawler
      .exclude((_name, dirPath) => {
        const dir = prefix + dirPath.slice(rootLength, -1);
        if (stack.ignores(dir, true)) return true;
        // Entered: the folder's own .gitignore applies to what is below it.
        stack.enter(dir);
        return false;
      })
      .filter((path, isDir) => isDir || !stack.ignores(prefix + path, false));
  }
  const files = await crawler.crawl(root).withPromise();
  if (signal.aborted) throw abortError(signal, `listing the files under "${start || '.'}"`);
  const out = prefix === '' ? files : files.map((f) => prefix + f);
  return out.sort();
}
