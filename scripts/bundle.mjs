// The second half of `npm run build`, after tsc: what makes the CLI start fast.
//
// 1. `dist/vendor/<package>.cjs`: each package Dirigent loads on demand (`lazyPackage`), bundled
//    into one file. Node resolves and reads one file instead of dozens (yaml alone is 35), which
//    is most of what loading them costs. `src/lazy-package.ts` loads these when they
//    are there, else the package itself.
// 2. `dist/cli-bundle/`: the `dirigent` command (`dist/src/cli/main.js`) and Dirigent's own
//    modules bundled into a few files, split where a command loads its module on demand, so a
//    command still loads only what it needs. Packages stay outside (commander excepted, which
//    every command uses), resolved from node_modules as before. The files are CommonJS: Node 20
//    keeps V8's compiled code of a script (`vm.Script`'s code cache) but not of an ES module.
// 3. `dist/cli/main.js`, the bin (`src/cli/bin.ts`): loads those files and the vendored packages
//    with code caches (`src/cli/code-cached-modules.ts`). The caches are made here, by running
//    the CLI (embedded runs of directives/hello.md, then --help), and again by the first process
//    that finds one missing (another Node, a file changed, a command not run here).
import { build, transform } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const vendor = join(dist, 'vendor');
const cliBundle = join(dist, 'cli-bundle');
const bin = join(dist, 'cli');

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

// Whitespace and comments out: less to read at every start, and ASCII only (esbuild escapes the
// rest), which V8 keeps one byte a character.
const node = {
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
  legalComments: 'none',
  minifyWhitespace: true,
};

for (const dir of [vendor, cliBundle, bin]) rmSync(dir, { recursive: true, force: true });

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
      outfile: join(vendor, `${name}.cjs`),
    }),
  ),
);

/** Every package but commander stays a package: loaded from node_modules when needed. */
const packagesOutside = {
  name: 'packages-outside',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path === 'commander' ? undefined : { path: args.path, external: true },
    );
  },
};

/**
 * `lazy-package.js` requires a vendored package through a `require` of its own
 * (`createRequire`); in the bundle it uses the one of the file it is in, so that the bin's loader
 * compiles the vendored file with a code cache too.
 */
const vendoredThroughLoader = {
  name: 'vendored-through-loader',
  setup(b) {
    b.onLoad({ filter: /[/\\]dist[/\\]src[/\\]lazy-package\.js$/ }, (args) => {
      const own = 'const require = createRequire(import.meta.url);';
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes(own)) throw new Error(`${args.path} no longer has "${own}"`);
      return { contents: text.replace(own, ''), loader: 'js' };
    });
  },
};

const esm = await build({
  ...node,
  entryPoints: [join(dist, 'src', 'cli', 'main.js')],
  bundle: true,
  splitting: true,
  format: 'esm',
  outdir: cliBundle,
  entryNames: 'dirigent',
  chunkNames: 'chunk-[hash]',
  outExtension: { '.js': '.cjs' },
  write: false,
  plugins: [packagesOutside, vendoredThroughLoader],
});

/**
 * One file of the split ES module bundle as CommonJS, in strict mode: `import` and `export` between the files
 * become `require` and `exports` (esbuild keeps live bindings as getters), and every `import()`,
 * of a file of the bundle or of a package, a `require` in a promise: the loader's `vm.Script`
 * could not run an `import()` without an experimental flag.
 */
async function toCommonJs(text, file) {
  const usesMeta = text.includes('import.meta');
  const { code, warnings } = await transform(text.replace(/^#!.*\n/, ''), {
    ...node,
    format: 'cjs',
    supported: { 'dynamic-import': false },
    ...(usesMeta && { define: { 'import.meta.url': '__importMetaUrl' } }),
    logLevel: 'silent',
  });
  if (warnings.length > 0)
    throw new Error(`${file}: ${warnings.map((w) => w.text).join('; ')} (converting to CommonJS)`);
  // Strict, as ES modules are (esbuild does not say so in CommonJS it converts from them).
  const meta = usesMeta
    ? "var __importMetaUrl=require('node:url').pathToFileURL(__filename).href;"
    : '';
  return `"use strict";${meta}\n${code}`;
}

/** Whether every character of `text` is ASCII (what the build promises the loader). */
function isAscii(text) {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

mkdirSync(cliBundle, { recursive: true });
const files = await Promise.all(
  esm.outputFiles.map(async (f) => ({ path: f.path, code: await toCommonJs(f.text, f.path) })),
);
for (const { path, code } of files) {
  if (!isAscii(code)) throw new Error(`${path} is not ASCII`);
  writeFileSync(path, code);
}

/** A hash of every file the bin loads: its caches are valid for these files only. */
function buildId() {
  const hash = createHash('sha256');
  for (const dir of [cliBundle, vendor])
    for (const name of readdirSync(dir).sort())
      hash
        .update(`${name}\0`)
        .update(readFileSync(join(dir, name)))
        .update('\0');
  return hash.digest('hex').slice(0, 16);
}

writeFileSync(
  join(cliBundle, 'bundle.json'),
  `${JSON.stringify({ entry: 'dirigent.cjs', buildId: buildId() })}\n`,
);

await build({
  ...node,
  entryPoints: [join(dist, 'src', 'cli', 'bin.js')],
  bundle: true,
  format: 'cjs',
  outfile: join(bin, 'main.js'),
  define: { 'import.meta.url': '__importMetaUrl' },
  banner: {
    js: `#!/usr/bin/env node\n"use strict";var __importMetaUrl=require('node:url').pathToFileURL(__filename).href;`,
  },
});
// The package is "type": "module"; the bin is CommonJS, and runs as a command (`#!`).
writeFileSync(join(bin, 'package.json'), '{ "type": "commonjs" }\n');
chmodSync(join(bin, 'main.js'), 0o755);

/**
 * Runs the bin as a user would, so that the caches of what an embedded run and --help load are
 * there from the start: in a project of its own, no Redis, no telemetry. A failure (no bash
 * here) only leaves some caches to the first real run.
 */
function warmCodeCaches() {
  const scratch = mkdtempSync(join(tmpdir(), 'dirigent-bundle-'));
  try {
    const project = join(scratch, 'project');
    mkdirSync(project);
    mkdirSync(join(scratch, 'user'));
    copyFileSync(join(root, 'directives', 'hello.md'), join(project, 'hello.md'));
    const env = Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) => !/^(DIRIGENT_|REDIS_URL$|OTEL_|NODE_OPTIONS$)/.test(name),
      ),
    );
    env.DIRIGENT_USER_SPACE = join(scratch, 'user');
    for (const args of [['run', 'hello.md'], ['run', 'hello.md', '--json'], ['--help']]) {
      const r = spawnSync(process.execPath, [join(bin, 'main.js'), ...args], {
        cwd: project,
        env,
        encoding: 'utf8',
      });
      if (r.status !== 0)
        console.warn(`bundle: dirigent ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

warmCodeCaches();
