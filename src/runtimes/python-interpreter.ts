import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { join } from 'node:path';
import { programNotFound } from '../errors/runtime-errors.js';

const resolved = new Map<string, Promise<string>>();

/**
 * The Python interpreter for a project, resolved once (RYE's order): the project's `.venv`,
 * `$RYE_PYTHON`, then `python3` on the PATH. The result is the real binary (`sys.executable`),
 * so later calls skip wrappers such as pyenv's shims, which cost ~100 ms a start.
 */
export function resolvePython(
  projectDir: string,
  env: Record<string, string | undefined> = process.env,
): Promise<string> {
  const key = `${projectDir}\0${env.RYE_PYTHON ?? ''}\0${env.PATH ?? ''}`;
  let found = resolved.get(key);
  if (found === undefined) {
    found = find(projectDir, env);
    resolved.set(key, found);
    found.catch(() => resolved.delete(key));
  }
  return found;
}

async function find(projectDir: string, env: Record<string, string | undefined>): Promise<string> {
  const venv = join(projectDir, '.venv', 'bin', 'python');
  const candidates = [
    ...((await isExecutable(venv)) ? [venv] : []),
    ...(env.RYE_PYTHON ? [env.RYE_PYTHON] : []),
    'python3',
  ];
  const tried: string[] = [];
  for (const candidate of candidates) {
    try {
      return await realExecutable(candidate, env);
    } catch (err) {
      tried.push(`${candidate} (${(err as Error).message.split('\n')[0]})`);
    }
  }
  throw programNotFound(
    'Python interpreter',
    'Python tools',
    tried,
    'Install python3, create .venv in the project, or set RYE_PYTHON.',
  );
}

function realExecutable(python: string, env: Record<string, string | undefined>): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      python,
      ['-c', 'import sys; print(sys.executable)'],
      { env: env as NodeJS.ProcessEnv, timeout: 10_000 },
      (err, stdout) => {
        if (err) reject(err);
        else resolve(stdout.trim() || python);
      },
    );
  });
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
