import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A getter for the package `name` that loads it (its CommonJS build, synchronously) on the first
 * call and returns the same module after: for packages only some inputs need (YAML front matter,
 * a `<schedule>`'s cron), so that a run whose inputs do not need them does not pay for loading
 * them. `T` is the package's type, as `typeof import('yaml')` through `import type`.
 */
export function lazyPackage<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(name) as T);
}
