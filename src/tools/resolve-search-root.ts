/** The folder (or file) a search tool starts from, checked to lie in the project. */
import { lstat, stat } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import { resolveInProject } from './resolve-in-project.js';
import { fileNotFound, notAFolder } from '../errors/file-errors.js';
import { ignoreMissing } from '../errors/ignore-expected.js';

/** Where a search starts. */
export interface SearchRoot {
  /** Absolute path. */
  abs: string;
  /** Project-relative path with `/` ('' for the project itself). */
  rel: string;
  isDirectory: boolean;
}

/**
 * `given` (the tool's `path` parameter, default the project) resolved inside the project
 * (`PATH_OUTSIDE_PROJECT` otherwise, symbolic links followed). A missing path is a fatal
 * `FILE_NOT_FOUND`; a file where a folder is needed (`allowFile` false) is a fatal
 * `NOT_A_DIRECTORY`. Both hints name `param`.
 */
export async function resolveSearchRoot(
  projectDir: string,
  given: string | undefined,
  options: { allowFile: boolean; param?: string },
): Promise<SearchRoot> {
  const param = options.param ?? 'path';
  const abs = await resolveInProject(projectDir, given ?? '.');
  const stats = await stat(abs).catch(ignoreMissing);
  if (stats === undefined) {
    const dangling = await lstat(abs).catch(ignoreMissing);
    throw fileNotFound(`"${given}"`, {
      path: abs,
      ...(dangling && { why: 'it is a link to nothing' }),
      hint: `Set ${param} to an existing folder of the project.`,
    });
  }
  if (!stats.isDirectory() && !options.allowFile) {
    throw notAFolder(given ?? '.', {
      path: abs,
      hint: `Set ${param} to a folder (or leave it out for the whole project).`,
    });
  }
  const rel = relative(resolve(projectDir), abs).split(sep).join('/');
  return { abs, rel, isDirectory: stats.isDirectory() };
}
