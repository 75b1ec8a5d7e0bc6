import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { PACKAGE_ROOT } from './package-info.js';

const require = createRequire(import.meta.url);

/**
 * A getter for the package `name` that loads it (its CommonJS build, synchronously) on the first
 * call and returns the same module after: for packages only some inputs need (YAML front matter,
 * a `<schedule>`'s cron), so that a run whose inputs do not need them does not pay for loading
 * them. `T` is the package's type, as `typeof import('yaml')` through `import type`.
 *
 * The build bundles each such package into one file (`dist/vendor/<name>.cjs`, see
 * `scripts/bundle.mjs`), which loads several times faster than the package's many files; without
 * it (the sources run as they are), the package itself is loaded.
 */
export function lazyPackage<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(vendored(name) ?? name) as T);
}

function vendored(name: string): string | undefined {
  const file = join(PACKAGE_ROOT, 'dist', 'vendor', `${name}.cjs`);
  return existsSync(file) ? file : undefined;
}
