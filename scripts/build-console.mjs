// Builds the web console (web/) into dist/console/: one script and one stylesheet bundled and
// minified by esbuild, and the page that loads them. `npm run build` runs it, so the package ships
// the console and `dirigent serve` needs nothing from a CDN.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'console');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { app: join(root, 'web', 'src', 'main.tsx') },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome111', 'firefox111', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: out,
  logLevel: 'warning',
  legalComments: 'linked',
});
copyFileSync(join(root, 'web', 'index.html'), join(out, 'index.html'));
