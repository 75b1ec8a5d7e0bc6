// The second half of `npm run build`, after tsc: what makes the CLI start fast.
//
// 1. `dist/vendor/<package>.cjs`: each package Dirigent loads on demand (`lazyPackage`), bundled
//    into one file. Node resolves and reads one file instead of dozens (yaml alone is 35), which
//    is most of what loading them costs. `src/lazy-package.ts` loads these when they
//    are there, else the package itself.
// 2. `dist/cli/`: the `dirigent` command (`dist/src/cli/main.js`) and Dirigent's own modules
//    bundled into a few ES module files, split where a command loads its module on demand, so
//    a command still loads only what it needs. Packages stay outside (commander excepted, which
//    every command uses), resolved from node_modules as before.
import { build } from 'esbuild';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

/** The packages `lazyPackage('…')` loads somewhere in the built sources. */
function lazyPackages(dir) {
  const names = new Set();
  for (const entry of readdirSync(dir, { recursive: true })) {
    if (!entry.endsWith('.js')) continue;
    const text = readFileSync(join(dir, entry), 'utf8');
    for (const m of text.matchAll(/lazyPackage\(\s*['"]([^'"]+)['"]\s*\)/g)) names.add(m[1]);
  }
  return [...names].sort();
}

const VENDORED = lazyPackages(join(dist, 'src'));

const node = { platform: 'node', target: 'node20', logLevel: 'warning', legalComments: 'none' };

rmSync(join(dist, 'vendor'), { recursive: true, force: true });
rmSync(join(dist, 'cli'), { recursive: true, force: true });

await Promise.all(
  VENDORED.map((name) =>
    build({
      ...node,
      stdin: {
        contents: `module.exports = require(${JSON.stringify(name)});`,
        resolveDir: root,
        sourcefile: `${name}.cjs`,
        loader: 'js',
      },
      bundle: true,
      format: 'cjs',
      outfile: join(dist, 'vendor', `${name}.cjs`),
    }),
  ),
);

await build({
  ...node,
  entryPoints: [join(dist, 'src', 'cli', 'main.js')],
  bundle: true,
  splitting: true,
  format: 'esm',
  outdir: join(dist, 'cli'),
  chunkNames: 'chunk-[hash]',
  // commander is CommonJS and requires Node's modules: an ES module has no `require` of its own.
  banner: {
    js: "import { createRequire as createRequireOfCli } from 'node:module'; const require = createRequireOfCli(import.meta.url);",
  },
  // Every package but commander stays a package: loaded from node_modules when needed.
  plugins: [
    {
      name: 'packages-outside',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) =>
          args.path === 'commander' ? undefined : { path: args.path, external: true },
        );
      },
    },
  ],
});
