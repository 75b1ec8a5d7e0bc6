/** Where Deno hosts keep their cache and harness, outside any project. */
import { createHash } from 'node:crypto';
import { mkdir, rename, writeFile, readFile } from 'node:fs/promises';
import { homedir, tmpdir, userInfo } from 'node:os';
import { join, relative, isAbsolute } from 'node:path';
import { HARNESS_SOURCE } from './harness-source.js';
import { ignoreMissing } from '../../errors/ignore-expected.js';

/**
 * The root of Dirigent's Deno cache: `$XDG_CACHE_HOME/dirigent/deno`, else
 * `<tmpdir>/dirigent-deno-<uid>`, else `~/.cache/dirigent/deno`: the first that is not inside
 * `projectDir` (a tool may write to its project, and must not reach the cache other tools load
 * their code from).
 */
export function denoCacheRoot(
  projectDir: string,
  env: Record<string, string | undefined> = process.env,
): string {
  const xdg = env.XDG_CACHE_HOME;
  const candidates = [
    ...(xdg && isAbsolute(xdg) ? [join(xdg, 'dirigent', 'deno')] : []),
    join(tmpdir(), `dirigent-deno-${uid()}`),
    join(homedir(), '.cache', 'dirigent', 'deno'),
  ];
  return candidates.find((root) => !inside(root, projectDir)) ?? candidates[0]!;
}

const harnesses = new Map<string, Promise<string>>();

/**
 * The harness module under `root`, written once (atomically, named by its content hash) and
 * reused by every host; the directory is created private to the user.
 */
export function harnessFile(root: string): Promise<string> {
  let file = harnesses.get(root);
  if (file === undefined) {
    file = writeHarness(root);
    harnesses.set(root, file);
    file.catch(() => harnesses.delete(root));
  }
  return file;
}

async function writeHarness(root: string): Promise<string> {
  const hash = createHash('sha256').update(HARNESS_SOURCE).digest('hex').slice(0, 16);
  const file = join(root, `harness-${hash}.js`);
  await mkdir(join(root, 'cache'), { recursive: true, mode: 0o700 });
  const current = await readFile(file, 'utf8').catch(ignoreMissing);
  if (current === HARNESS_SOURCE) return file;
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temp, HARNESS_SOURCE, { mode: 0o600 });
  await rename(temp, file);
  return file;
}

function inside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

function uid(): string {
  try {
    return String(userInfo().uid);
  } catch {
    return 'user';
  }
}
