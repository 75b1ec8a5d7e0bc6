/**
 * The shape of `src/` as a specification (STYLE.md, lessons 1, 2 and 9): no import circle (a
 * type-only import counts, since it still ties two files together); no class that extends another
 * class of ours unless it is one (no chain of abstract classes splitting one concept); `index.ts`
 * files that only re-export; no import from the core up into the faces; a pure core that reaches
 * no I/O. Each check runs first on a small fixture that breaks it, so it cannot pass by finding
 * nothing.
 *
 * A file's name is not checked against its main export: about a hundred files hold a family of
 * small exports (`redis/run-store/run-hash.ts`, `values/shell-words.ts`) or one under another name
 * (`tools/builtin/bash.ts` exports `bashTool`), too many for a list of exceptions.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The part of madge's API this test uses (madge ships no types). */
interface MadgeResult {
  /** File (relative to the scanned folder) → the files it imports. */
  obj(): Record<string, string[]>;
  /** Each circle as the files along it. */
  circular(): string[][];
}
type Madge = (path: string, config: Record<string, unknown>) => Promise<MadgeResult>;

/** File (relative to its folder, `/`-separated) → the files it imports, as madge finds them. */
type ImportGraph = Record<string, string[]>;
/** File (relative to its folder, `/`-separated) → its text. */
type Sources = Map<string, string>;

const madge = createRequire(import.meta.url)('madge') as Madge;

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const SRC = join(ROOT, 'src');
const TSCONFIG = join(ROOT, 'tsconfig.json');

/**
 * The classes of ours that extend another class of ours, each a real is-a: a tool job's span is
 * the span of a job (the kind a run job's drive gets), with lock waits and an outcome of its own.
 */
const ALLOWED_SUBCLASSES = ['redis/job-spans.ts: ToolJobSpan extends JobSpan'];

/** The faces: they translate arguments in and results out, and may import anything. */
const FACES = ['cli/', 'api/', 'mcp/'];
/** The pure core: parsing, compiling, expressions, values and errors, which do no I/O. */
const CORE = ['directive/', 'compiler/', 'expr/', 'values/', 'errors/'];
/** What the core must not reach: the layers that run, store and serve runs, and the faces. */
const ABOVE_CORE = [
  'engine/',
  'redis/',
  'operations/',
  'embedded/',
  'run-backend/',
  'batches/',
  ...FACES,
];
/**
 * How the core loads the packages it uses (a vendored bundle when the build made one): module
 * loading, not I/O of a run, so the core may import them.
 */
const PACKAGE_LOADERS = ['lazy-package.ts'];
/** Node modules that read or write files, sockets or processes. */
const IO_MODULE = /^(?:node:)?(?:fs|net|child_process)(?:\/|$)/;

/** What `madge --circular --extensions ts --ts-config tsconfig.json` finds, type imports included. */
function importGraph(folder: string): Promise<MadgeResult> {
  return madge(folder, {
    fileExtensions: ['ts'],
    tsConfig: TSCONFIG,
    detectiveOptions: { ts: { skipTypeImports: false } },
  });
}

/** Every `.ts` file under `folder` with its text, by its path relative to `folder`. */
async function readSources(folder: string): Promise<Sources> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(folder, join(e.parentPath, e.name)).split(sep).join('/'))
    .sort();
  const texts = await Promise.all(files.map((f) => readFile(join(folder, f), 'utf8')));
  return new Map(files.map((f, i) => [f, texts[i]!]));
}

/** Writes `files` (path → text) under `folder`. */
async function writeFixture(folder: string, files: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(files)) {
    await mkdir(dirname(join(folder, file)), { recursive: true });
    await writeFile(join(folder, file), text);
  }
}

const under = (folders: string[], file: string) => folders.some((f) => file.startsWith(f));

// ---- classes ----

/** The start of a class declaration, up to its name. */
const CLASS_DECLARATION = /^[ \t]*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+(\w+)/gm;

/** The classes declared in `text` that extend another, as `Name extends Base`. */
function subclassesIn(text: string): { name: string; base: string }[] {
  const found: { name: string; base: string }[] = [];
  for (const m of text.matchAll(CLASS_DECLARATION)) {
    // The head up to the body's brace, type parameters blanked (they say `extends` too).
    let head = '';
    let depth = 0;
    for (let i = m.index + m[0].length; i < text.length; i++) {
      const c = text[i]!;
      if (c === '<') depth++;
      else if (c === '>') depth--;
      else if (c === '{' && depth === 0) break;
      else if (depth === 0) head += c;
    }
    const base = /\bextends\s+([\w.]+)/.exec(head)?.[1];
    if (base !== undefined) found.push({ name: m[1]!, base });
  }
  return found;
}

/** The module `text` imports the binding `local` from, if it does. */
function importSourceOf(text: string, local: string): string | undefined {
  for (const m of text.matchAll(/\bimport\s+(?:type\s+)?([^'";]*?)\s+from\s+['"]([^'"]+)['"]/g)) {
    const bindings = m[1]!
      .replace(/[{}]/g, ',')
      .split(',')
      .map(
        (b) =>
          b
            .trim()
            .split(/\s+as\s+/)
            .pop()!,
      );
    if (bindings.includes(local)) return m[2];
  }
  return undefined;
}

/** Every class that extends a class of the same sources (declared there, or imported by path). */
function ownSubclasses(sources: Sources): string[] {
  const found: string[] = [];
  for (const [file, text] of sources)
    for (const { name, base } of subclassesIn(text)) {
      const root = base.split('.')[0]!;
      const declared = new RegExp(`\\bclass\\s+${root}\\b`).test(text);
      if (declared || importSourceOf(text, root)?.startsWith('.'))
        found.push(`${file}: ${name} extends ${base}`);
    }
  return found.sort();
}

// ---- index files ----

const REEXPORT = /^export\s+(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s+from\s+['"][^'"]+['"]$/;

/** The `index.ts` files that hold a statement other than `export … from`. */
function indexFilesThatDoMore(sources: Sources): string[] {
  return [...sources]
    .filter(([file]) => file === 'index.ts' || file.endsWith('/index.ts'))
    .filter(([, text]) =>
      text
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '')
        .split(';')
        .map((s) => s.trim())
        .some((s) => s !== '' && !REEXPORT.test(s)),
    )
    .map(([file]) => file)
    .sort();
}

// ---- layers ----

/** The modules `text` names in its imports and requires, local or not. */
function importedModules(text: string): string[] {
  const re = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"]([^'"]+)['"]/g;
  return [...text.matchAll(re)].map((m) => m[1]!);
}

/** Imports of a face by a module that is not one, as `from → to`. */
function importsOfFaces(graph: ImportGraph): string[] {
  return Object.entries(graph)
    .filter(([from]) => !under(FACES, from))
    .flatMap(([from, deps]) => deps.filter((d) => under(FACES, d)).map((d) => `${from} → ${d}`))
    .sort();
}

/** What `file` itself does that the core must not: import a layer above it, or an I/O module. */
function forbiddenIn(file: string, graph: ImportGraph, sources: Sources): string[] {
  const io = importedModules(sources.get(file) ?? '').filter((m) => IO_MODULE.test(m));
  const above = (graph[file] ?? []).filter((d) => under(ABOVE_CORE, d));
  return [...io, ...above];
}

/**
 * Where the core reaches what it must not: a core module that imports an I/O module or a layer
 * above it, or that imports a module outside the core from which either is reached (the walk
 * stops at core modules, which answer for themselves, and at the layers above, which are named).
 */
function coreBreaches(graph: ImportGraph, sources: Sources): string[] {
  const breaches: string[] = [];
  for (const file of Object.keys(graph).filter((f) => under(CORE, f))) {
    for (const m of forbiddenIn(file, graph, sources))
      breaches.push(under(ABOVE_CORE, m) ? `${file} → ${m}` : `${file} imports ${m}`);
    const outside = (d: string) =>
      !under(CORE, d) && !under(ABOVE_CORE, d) && !PACKAGE_LOADERS.includes(d);
    for (const dep of graph[file]!.filter(outside)) {
      const seen = new Set([dep]);
      for (const f of seen) {
        for (const m of forbiddenIn(f, graph, sources))
          breaches.push(`${file} → ${dep}, which reaches ${m} (${f})`);
        for (const d of graph[f] ?? []) if (!under(CORE, d) && !under(ABOVE_CORE, d)) seen.add(d);
      }
    }
  }
  return [...new Set(breaches)].sort();
}

// ---- the checks on fixtures ----

describe('the shape checks, on fixtures that break them', () => {
  let fixture: string;
  beforeAll(async () => {
    fixture = await mkdtemp(join(tmpdir(), 'dirigent-source-shape-'));
    await writeFixture(fixture, {
      'circle/a.ts': "import type { B } from './b.js';\nexport interface A { b?: B }\n",
      'circle/b.ts': "import type { A } from './a.js';\nexport interface B { a?: A }\n",
      'layers/cli/face.ts': "import { e } from '../engine/e.js';\nexport const face = e;\n",
      'layers/cli/c.ts': 'export const c = 1;\n',
      'layers/engine/e.ts': "import { c } from '../cli/c.js';\nexport const e = c;\n",
      'layers/directive/pure.ts': "import { z } from '../values/z.js';\nexport const p = z;\n",
      'layers/values/z.ts': 'export const z = 1;\n',
      'layers/directive/reads.ts':
        "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n",
      'layers/directive/climbs.ts': "import { e } from '../engine/e.js';\nexport const up = e;\n",
      'layers/directive/launders.ts': "import { w } from '../policy/w.js';\nexport const l = w;\n",
      'layers/policy/w.ts': "import { q } from './q.js';\nexport const w = q;\n",
      'layers/policy/q.ts': "import { spawn } from 'child_process';\nexport const q = spawn;\n",
    });
  });
  afterAll(async () => {
    await rm(fixture, { recursive: true, force: true });
  });

  it('finds a circle made only of type imports', async () => {
    const graph = await importGraph(join(fixture, 'circle'));
    expect(graph.circular()).toEqual([['a.ts', 'b.ts']]);
  });

  it('finds a class that extends a class of ours, and not one that extends a library class', () => {
    const sources: Sources = new Map([
      ['base.ts', 'export abstract class Base<T extends { a: 1 }> {}\n'],
      ['sub.ts', "import { Base } from './base.js';\nexport class Sub extends Base<{ a: 1 }> {}\n"],
      ['local.ts', 'class Inner {}\nexport class Outer\n  extends Inner {\n}\n'],
      ['error.ts', 'export class Oops extends Error {}\n'],
      ['library.ts', "import * as lib from 'lib';\nexport class Bar extends lib.SingleBar {}\n"],
    ]);
    expect(ownSubclasses(sources)).toEqual([
      'local.ts: Outer extends Inner',
      'sub.ts: Sub extends Base',
    ]);
  });

  it('finds an index.ts that does more than re-export', () => {
    const reexports = "/** Doc. */\nexport * from './a.js';\nexport { b, type C } from './b.js';\n";
    const sources: Sources = new Map([
      ['index.ts', reexports],
      ['tools/index.ts', `${reexports}export const TOOLS = [];\n`],
      ['tools/list.ts', 'export const list = [];\n'],
    ]);
    expect(indexFilesThatDoMore(sources)).toEqual(['tools/index.ts']);
  });

  it('finds imports of a face from below, and a core that reaches I/O or a layer above it', async () => {
    const folder = join(fixture, 'layers');
    const graph = (await importGraph(folder)).obj();
    const sources = await readSources(folder);
    expect(importsOfFaces(graph)).toEqual(['engine/e.ts → cli/c.ts']);
    expect(coreBreaches(graph, sources)).toEqual([
      'directive/climbs.ts → engine/e.ts',
      'directive/launders.ts → policy/w.ts, which reaches child_process (policy/q.ts)',
      'directive/reads.ts imports node:fs',
    ]);
  });
});

// ---- the checks on src/ ----

describe('src/', () => {
  let madgeResult: MadgeResult;
  let graph: ImportGraph;
  let sources: Sources;
  beforeAll(async () => {
    [madgeResult, sources] = await Promise.all([importGraph(SRC), readSources(SRC)]);
    graph = madgeResult.obj();
  }, 60_000);

  it('reads every .ts file of src/ into the import graph', () => {
    expect(Object.keys(graph).sort()).toEqual([...sources.keys()]);
  });

  it('has no import circle, type imports included', () => {
    const circles = madgeResult.circular().map((files) => files.join(' > '));
    expect(circles, `import circles in src/:\n${circles.join('\n')}`).toEqual([]);
  });

  it('has no class that extends a class of its own but where one is the other', () => {
    expect(ownSubclasses(sources)).toEqual(ALLOWED_SUBCLASSES);
  });

  it('has index.ts files that only re-export', () => {
    expect(indexFilesThatDoMore(sources)).toEqual([]);
  });

  it('has no module but a face (cli, api, mcp) that imports a face', () => {
    expect(importsOfFaces(graph)).toEqual([]);
  });

  it('has a core that reaches no I/O and no layer above it', () => {
    expect(coreBreaches(graph, sources)).toEqual([]);
  });
});
