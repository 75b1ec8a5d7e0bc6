// `npm run screenshots`: takes the console's screenshots for the docs (docs/console/ by default,
// or the folder given as `--out <dir>`), after `npm run build`. It serves the console test's
// project with a worker and `dirigent serve` on Redis (REDIS_URL, else the local default), under
// a key prefix of its own that it deletes after, and drives Chromium (installed when missing, see
// ensure-chromium.mjs). What it does is test/support/console-screenshots.ts, which the console
// test runs too; esbuild compiles it (its packages stay in node_modules) into dist/screenshots/.
import { build } from 'esbuild';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureChromium } from './ensure-chromium.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { out: { type: 'string' } } });
const outDir = resolve(values.out ?? join(root, 'docs', 'console'));
const cli = join(root, 'dist', 'cli', 'main.js');
const bundle = join(root, 'dist', 'screenshots', 'console-screenshots.mjs');

try {
  ensureChromium();
  await build({
    entryPoints: [join(root, 'test', 'support', 'console-screenshots.ts')],
    bundle: true,
    packages: 'external',
    platform: 'node',
    target: 'node20',
    format: 'esm',
    outfile: bundle,
    logLevel: 'warning',
  });
  const { screenshotConsole, SCREENSHOTS } = await import(pathToFileURL(bundle).href);
  const files = await screenshotConsole({
    cli,
    outDir,
    redisUrl: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
  });
  for (const file of files)
    console.log(`${file}: ${SCREENSHOTS[file.slice(file.lastIndexOf('/') + 1)]}`);
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
