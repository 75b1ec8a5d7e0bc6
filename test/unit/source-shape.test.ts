/**
 * The shape of `src/` as a specification: no import circle (a type-only import counts, since it
 * still ties two files together) and no file over {@link MAX_LINES} lines.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
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

const madge = createRequire(import.meta.url)('madge') as Madge;

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const SRC = join(ROOT, 'src');
const TSCONFIG = join(ROOT, 'tsconfig.json');

/**
 * A smoke alarm, not a design rule: a file holds one concept however long it is (a class stays
 * whole), but one this long most likely holds two.
 */
const MAX_LINES = 1000;

/** What `madge --circular --extensions ts --ts-config tsconfig.json` finds, type imports included. */
function importGraph(folder: string): Promise<MadgeResult> {
  return madge(folder, {
    fileExtensions: ['ts'],
    tsConfig: TSCONFIG,
    detectiveOptions: { ts: { skipTypeImports: false } },
  });
}

/** Every `.ts` file under `folder`, relative to it, with `/` separators (as madge names them). */
async function tsFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(folder, join(e.parentPath, e.name)).split(sep).join('/'))
    .sort();
}

/** Lines as `wc -l` counts them: a final newline ends the last line rather than starting one. */
function lineCount(text: string): number {
  const breaks = text.split('\n').length - 1;
  return text.endsWith('\n') || text === '' ? breaks : breaks + 1;
}

describe('the import check', () => {
  let fixture: string;
  beforeAll(async () => {
    fixture = await mkdtemp(join(tmpdir(), 'dirigent-source-shape-'));
    await writeFile(
      join(fixture, 'a.ts'),
      "import type { B } from './b.js';\nexport interface A { b?: B }\n",
    );
    await writeFile(
      join(fixture, 'b.ts'),
      "import type { A } from './a.js';\nexport interface B { a?: A }\n",
    );
  });
  afterAll(async () => {
    await rm(fixture, { recursive: true, force: true });
  });

  it('finds a circle made only of type imports', async () => {
    const graph = await importGraph(fixture);
    expect(graph.circular()).toEqual([['a.ts', 'b.ts']]);
  });
});

describe('src/', () => {
  let graph: MadgeResult;
  beforeAll(async () => {
    graph = await importGraph(SRC);
  }, 60_000);

  it('reads every .ts file of src/ into the import graph', async () => {
    expect(Object.keys(graph.obj()).sort()).toEqual(await tsFiles(SRC));
  });

  it('has no import circle, type imports included', () => {
    const circles = graph.circular().map((files) => files.join(' > '));
    expect(circles, `import circles in src/:\n${circles.join('\n')}`).toEqual([]);
  });

  it(`has no .ts file over ${MAX_LINES} lines`, async () => {
    const offenders: string[] = [];
    for (const file of await tsFiles(SRC)) {
      const lines = lineCount(await readFile(join(SRC, file), 'utf8'));
      if (lines > MAX_LINES) offenders.push(`src/${file} (${lines} lines)`);
    }
    expect(offenders, `files over ${MAX_LINES} lines:\n${offenders.join('\n')}`).toEqual([]);
  });
});
