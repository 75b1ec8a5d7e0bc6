/** Finding the Deno executable: `$DIRIGENT_DENO`, else the one the `deno` npm package installs. */
import { access, constants } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { programNotFound } from '../../errors/runtime-errors.js';

let found: Promise<string> | undefined;
let foundFor: string | undefined;

/**
 * The path of the Deno binary: `$DIRIGENT_DENO` when set, else the executable inside the `deno`
 * npm package (a dependency of Dirigent). Resolved once per value of `$DIRIGENT_DENO`; throws a
 * fatal `RUNTIME_UNAVAILABLE` when neither is executable.
 */
export function resolveDeno(
  env: Record<string, string | undefined> = process.env,
): Promise<string> {
  const override = env.DIRIGENT_DENO ?? '';
  if (found === undefined || foundFor !== override) {
    foundFor = override;
    found = find(override);
    found.catch(() => (found = undefined));
  }
  return found;
}

async function find(override: string): Promise<string> {
  const tried: string[] = [];
  const candidates: string[] = [];
  if (override) candidates.push(override);
  else {
    // The deno package links its platform package's binary into itself on install; where
    // install scripts did not run, the platform package still holds it.
    const exe = process.platform === 'win32' ? 'deno.exe' : 'deno';
    const arch = process.arch === 'x64' ? 'x64' : 'arm64';
    const platformPackage = `@deno/${process.platform}-${arch}${process.platform === 'linux' ? '-glibc' : ''}`;
    for (const pkg of ['deno', platformPackage]) {
      try {
        const manifest = createRequire(import.meta.url).resolve(`${pkg}/package.json`);
        candidates.push(join(dirname(manifest), exe));
      } catch (err) {
        tried.push(`the ${pkg} npm package (${(err as Error).message.split('\n')[0]})`);
      }
    }
  }
  for (const file of candidates) {
    try {
      await access(file, constants.X_OK);
      return file;
    } catch {
      tried.push(`${file} (not an executable file)`);
    }
  }
  throw programNotFound(
    'Deno executable',
    'JS/TS tools',
    tried,
    'Run npm install (Dirigent depends on the deno package), or set DIRIGENT_DENO to a deno binary.',
  );
}
