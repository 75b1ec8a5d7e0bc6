import { lstat, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { RetryPolicy } from '../directive/ast.js';
import { DirigentError, ErrorCode } from '../errors/index.js';

/** What a running tool knows about the call it serves. */
export interface ToolContext {
  /** Absolute path of the project; file access is confined to it (see {@link resolveInProject}). */
  projectDir: string;
  /** Aborted on step timeout or run cancellation; long-running tools must stop their work. */
  signal: AbortSignal;
  runId: string;
  step: string;
  /** 1-based number of this try. */
  attempt: number;
}

/**
 * A tool that runs in process. Its `execute` receives parameters already validated against
 * `paramsSchema` (coerced, defaults filled). It returns the result, or throws a `DirigentError`
 * whose `retryable` flag says whether a retry may help; anything else thrown counts as a fatal
 * `TOOL_FAILED`.
 */
export interface ToolDefinition {
  /** `space/category/name`, e.g. `dirigent/util/echo`. */
  itemId: string;
  description: string;
  /** JSON Schema of the parameters, compiled once by the dispatcher. */
  paramsSchema: object;
  /** Overrides of {@link DEFAULT_RETRY_POLICY}; a step's `<retry>` overrides both. */
  retry?: Partial<RetryPolicy>;
  execute(params: Record<string, unknown>, ctx: ToolContext): unknown | Promise<unknown>;
}

/**
 * The error to reject with once `signal` is aborted: its reason when that is a `DirigentError`
 * (so a step timeout surfaces as `STEP_TIMEOUT`), else a fatal `CANCELLED`.
 */
export function abortError(signal: AbortSignal, what: string): DirigentError {
  const reason: unknown = signal.reason;
  if (reason instanceof DirigentError) return reason;
  return DirigentError.fatal(ErrorCode.CANCELLED, `${what} was cancelled`, { cause: reason });
}

/**
 * Resolves `path` against `projectDir` and refuses, with a fatal `PATH_OUTSIDE_PROJECT`, any path
 * that lands outside it: absolute paths elsewhere, `..` that climbs out, and symlinks that point
 * out. The path need not exist (tools create files). Returns the lexical absolute path.
 *
 * This is a check before use, not a sandbox: a link swapped in between check and use wins.
 */
export async function resolveInProject(projectDir: string, path: string): Promise<string> {
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
  return target;
}

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
