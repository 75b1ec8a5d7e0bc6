/** Keeping a tool's file paths inside the project directory. */
import { lstat, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { DirigentError, ErrorCode } from '../errors/index.js';

/**
 * Resolves `path` against `projectDir` and refuses, with a fatal `PATH_OUTSIDE_PROJECT`, any path
 * that lands outside it: absolute paths elsewhere, `..` that climbs out, and symlinks that point
 * out. The path need not exist (tools create files). For `write` access, the project's own folders
 * (`.ai/`, `.dirigent/` but its scratch `tmp/`, `.git/`) are refused with `PATH_PROTECTED`: a value naming a path cannot
 * make a tool rewrite the directives, tools, trusted keys or git hooks that run next. A path
 * holding a NUL byte is `INVALID_PARAMS`. Returns the lexical absolute path.
 *
 * This is a check before use, not a sandbox: a link swapped in between check and use wins.
 */
export async function resolveInProject(
  projectDir: string,
  path: string,
  access: 'read' | 'write' = 'read',
): Promise<string> {
  if (path.includes('\0')) {
    throw DirigentError.fatal(
      ErrorCode.INVALID_PARAMS,
      `path ${JSON.stringify(path)} holds a NUL byte`,
      {
        hint: 'Pass a file name without NUL characters.',
        details: { path },
      },
    );
  }
  const root = resolve(projectDir);
  const target = resolve(root, path);
  const refuse = () =>
    DirigentError.fatal(
      ErrorCode.PATH_OUTSIDE_PROJECT,
      `path "${path}" is outside the project directory ${root}`,
      { hint: 'Use a path inside the project directory.', details: { path, projectDir: root } },
    );
  // Lexical check first: it is free and catches `..` and foreign absolute paths.
  if (!isInside(root, target)) throw refuse();
  // Then the real check: the project itself may sit behind a symlink (e.g. /tmp on macOS), so
  // both sides are compared as real paths.
  const [realRoot, realTarget] = await Promise.all([realPathOf(root), realPathOf(target)]);
  if (!isInside(realRoot, realTarget)) throw refuse();
  const [top = '', second] = relative(realRoot, realTarget).split(sep);
  const scratch = top === '.dirigent' && second === 'tmp';
  if (access === 'write' && PROTECTED.includes(top) && !scratch) {
    throw DirigentError.fatal(
      ErrorCode.PATH_PROTECTED,
      `path "${path}" is inside ${top}/, which tools may not write: it holds ${PROTECTED_WHAT[top]}`,
      {
        hint: `Write elsewhere in the project; change ${top}/ by hand (or with Dirigent's own commands).`,
        details: { path, folder: top },
      },
    );
  }
  return target;
}

/** Folders of a project that tools may read but never write. */
const PROTECTED = ['.ai', '.dirigent', '.git'];
const PROTECTED_WHAT: Record<string, string> = {
  '.ai': 'the directives, tools, keys and configuration the project runs',
  '.dirigent': 'the records of its runs (its tmp/ is scratch space, open to tools)',
  '.git': 'its history and hooks',
};

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}

/**
 * The real path `path` would have: the realpath of its nearest existing ancestor plus the rest.
 * A dangling symlink is followed to its target, since writing through it would create that.
 */
async function realPathOf(path: string, depth = 0): Promise<string> {
  try {
    return await realpath(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  }
  if (depth > 40) return path; // a chain of dangling links this long is a loop; realpath refuses it
  const link = await lstat(path).then(
    (s) => (s.isSymbolicLink() ? readlink(path) : undefined),
    () => undefined,
  );
  if (link !== undefined) return realPathOf(resolve(dirname(path), link), depth + 1);
  const parent = dirname(path);
  if (parent === path) return path;
  return join(await realPathOf(parent, depth + 1), basename(path));
}
