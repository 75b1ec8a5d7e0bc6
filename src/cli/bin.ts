/**
 * The `dirigent` command as installed: `scripts/bundle.mjs` builds this file into the bin,
 * `dist/cli/main.js`, a small CommonJS file (Node starts one faster than an ES module). It loads
 * the bundle of the CLI (`dist/cli-bundle/`, from `main.ts`) and the vendored packages
 * (`dist/vendor/`) with V8 code caches (`code-cached-modules.ts`), made at build time and again
 * on first use wherever they are missing: in the bundle's folder, or in the user's cache folder
 * when the package's own cannot be written.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CodeCachedModules, codeCacheKey } from './code-cached-modules.js';

/** What `scripts/bundle.mjs` writes next to the bundle's files (`bundle.json`). */
interface BundleManifest {
  /** The file of `main.ts`, in the bundle's folder. */
  entry: string;
  /** A hash of every file the bundle loads, vendored packages included. */
  buildId: string;
}

const dist = join(dirname(fileURLToPath(import.meta.url)), '..');
const bundle = join(dist, 'cli-bundle');
const { entry, buildId } = JSON.parse(
  readFileSync(join(bundle, 'bundle.json'), 'utf8'),
) as BundleManifest;
const cacheHome =
  process.env.XDG_CACHE_HOME || (process.env.HOME ? join(process.env.HOME, '.cache') : undefined);
const modules = new CodeCachedModules({
  dirs: [bundle, join(dist, 'vendor')],
  cacheDirs: [
    join(bundle, '.code-cache'),
    ...(cacheHome === undefined ? [] : [join(cacheHome, 'dirigent', 'code-cache')]),
  ],
  key: codeCacheKey(buildId),
});
// At exit, after the command: the caches then hold the functions it ran.
process.once('exit', () => modules.saveCaches());
modules.require(join(bundle, entry));
