/**
 * dirigent/fs/ls, glob and grep on a real tree generated for the test: nested .gitignore files
 * with negations, the project's override, binary files, symbolic links out of the project (a
 * file and a folder), a very long line, and enough files to hit a time bound.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuiltinDispatcher } from '../../../src/tools/builtin-dispatcher.js';
import { caller, rejection } from './helpers.js';
import type { GrepMatch } from '../../../src/tools/builtin/fs-grep.js';

let root: string;
let project: string;
const call = caller(
  () => new BuiltinDispatcher(),
  () => project,
);
type Out = Record<string, unknown>;
const glob = async (params: Out) =>
  (await call('dirigent/fs/glob', params)) as { files: string[] } & Out;
const grep = async (params: Out) =>
  (await call('dirigent/fs/grep', params)) as {
    matches: GrepMatch[];
  } & Out;

const LONG = `${'x'.repeat(200_000)}NEEDLE${'y'.repeat(200_000)}`;

/** The tree: path → content (a Buffer for binary files). */
const TREE: Record<string, string | Buffer> = {
  '.gitignore': '*.log\nbuild/\n/secret.txt\n!keep.log\n',
  'secret.txt': 'TODO hidden at the root\n',
  'src/app.ts': 'const a = 1; // TODO: tidy\nexport default a;\n',
  'src/util.ts': 'export const util = () => 2;\n',
  'src/debug.log': 'TODO in a log\n',
  'src/keep.log': 'TODO kept by a negation\n',
  'src/secret.txt': 'not at the root, so not ignored (TODO)\n',
  'src/vendor/.gitignore': '*.ts\n!kept.ts\n',
  'src/vendor/lib.ts': 'TODO vendored\n',
  'src/vendor/kept.ts': 'TODO kept by the nested negation\n',
  'build/out.ts': 'TODO built\n',
  'node_modules/pkg/index.ts': 'TODO dependency\n',
  'docs/guide.md': 'line 1\nline 2\nTODO: write the guide\nline 4\nline 5\n',
  'docs/long.min.js': LONG,
  'assets/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0x54, 0x4f, 0x44, 0x4f]),
  'generated/data.csv': 'a,b\n',
  '.ai/config/ignore': 'generated/\n',
};

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'dirigent-search-')));
  project = join(root, 'project');
  const outside = join(root, 'outside');
  await mkdir(join(outside, 'dir'), { recursive: true });
  await writeFile(join(outside, 'secret.ts'), 'TODO outside the project\n');
  await writeFile(join(outside, 'dir', 'more.ts'), 'TODO outside too\n');
  for (const [path, content] of Object.entries(TREE)) {
    await mkdir(dirname(join(project, path)), { recursive: true });
    await writeFile(join(project, path), content);
  }
  await symlink(join(outside, 'secret.ts'), join(project, 'src', 'escape.ts'));
  await symlink(join(outside, 'dir'), join(project, 'src', 'escape-dir'));
  await symlink(join(project, 'src', 'util.ts'), join(project, 'src', 'alias.ts'));
});

afterAll(() => rm(root, { recursive: true, force: true }));

describe('the ignore stack', () => {
  it('glob keeps what the defaults, the .gitignore files and the override leave, and nothing more', async () => {
    const all = await glob({ pattern: '*' });
    expect(all.files).toEqual([
      '.ai/config/ignore',
      '.gitignore',
      'assets/logo.png',
      'docs/guide.md',
      'docs/long.min.js',
      'src/app.ts',
      'src/keep.log',
      'src/secret.txt',
      'src/util.ts',
      'src/vendor/.gitignore',
      'src/vendor/kept.ts',
    ]);
  });

  it('no_ignore lists everything but symbolic links', async () => {
    const all = await glob({ pattern: '*', no_ignore: true });
    expect(all.files).toContain('build/out.ts');
    expect(all.files).toContain('node_modules/pkg/index.ts');
    expect(all.files).toContain('src/vendor/lib.ts');
    expect(all.files).toContain('generated/data.csv');
    expect(all.files.some((f) => f.includes('escape') || f.includes('alias'))).toBe(false);
  });

  it('a path inside an ignored folder is searched, under the rules found from there down', async () => {
    expect((await glob({ pattern: '*.ts', path: 'build' })).files).toEqual(['build/out.ts']);
    expect((await glob({ pattern: '*.ts', path: 'node_modules/pkg' })).files).toEqual([
      'node_modules/pkg/index.ts',
    ]);
  });

  it('ls leaves ignored entries out and counts them; links show their target only inside the project', async () => {
    const src = (await call('dirigent/fs/ls', { path: 'src' })) as {
      entries: Out[];
      ignored: number;
    };
    const names = src.entries.map((e) => e.name);
    expect(names).toEqual([
      'vendor',
      'alias.ts',
      'app.ts',
      'escape-dir',
      'escape.ts',
      'keep.log',
      'secret.txt',
      'util.ts',
    ]);
    expect(src.ignored).toBe(1); // debug.log
    const byName = Object.fromEntries(src.entries.map((e) => [e.name, e]));
    expect(byName['alias.ts']).toMatchObject({ type: 'symlink', target: 'src/util.ts' });
    expect(byName['escape.ts']).toMatchObject({ type: 'symlink', target: null });
    expect(byName['escape-dir']).toMatchObject({ type: 'symlink', target: null });
    expect(byName['app.ts']).toMatchObject({
      type: 'file',
      size: Buffer.byteLength(TREE['src/app.ts']!),
      path: 'src/app.ts',
    });
    expect(Date.parse(byName['app.ts']!.modified as string)).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('dirigent/fs/glob', () => {
  it('matches names at any depth, paths below path with a slash, and caps the list', async () => {
    expect((await glob({ pattern: '*.ts' })).files).toEqual([
      'src/app.ts',
      'src/util.ts',
      'src/vendor/kept.ts',
    ]);
    expect((await glob({ pattern: 'vendor/*.ts', path: 'src' })).files).toEqual([
      'src/vendor/kept.ts',
    ]);
    expect(await glob({ pattern: '*.{ts,md}', limit: 2 })).toMatchObject({
      files: ['docs/guide.md', 'src/app.ts'],
      count: 2,
      total: 4,
      truncated: true,
    });
  });

  it('refuses a path out of the project, through .. or a symbolic link, and a file as a folder', async () => {
    expect((await rejection(glob({ pattern: '*', path: '..' }))).code).toBe('PATH_OUTSIDE_PROJECT');
    expect((await rejection(glob({ pattern: '*', path: 'src/escape-dir' }))).code).toBe(
      'PATH_OUTSIDE_PROJECT',
    );
    const notDir = await rejection(glob({ pattern: '*', path: 'src/app.ts' }));
    expect(notDir).toMatchObject({ code: 'NOT_A_DIRECTORY', retryable: false });
    expect(notDir.hint).toContain('path');
    expect((await rejection(glob({ pattern: '*', path: 'nowhere' }))).code).toBe('FILE_NOT_FOUND');
  });
});

describe('dirigent/fs/grep', () => {
  it('finds lines in path order, never in ignored, binary or linked files', async () => {
    const r = await grep({ pattern: 'TODO' });
    expect(r.matches.map((m) => `${m.file}:${m.line}`)).toEqual([
      'docs/guide.md:3',
      'src/app.ts:1',
      'src/keep.log:1',
      'src/secret.txt:1',
      'src/vendor/kept.ts:1',
    ]);
    expect(r).toMatchObject({
      count: 5,
      files_matched: 5,
      truncated: false,
      skipped: { binary: 1 },
    });
  });

  it('gives context lines, columns, and the regular expression in RE2 syntax', async () => {
    const r = await grep({ pattern: 'TODO: (\\w+) the', before: 2, after: 1, path: 'docs' });
    expect(r.matches).toEqual([
      {
        file: 'docs/guide.md',
        line: 3,
        column: 1,
        content: 'TODO: write the guide',
        before: ['line 1', 'line 2'],
        after: ['line 4'],
      },
    ]);
    const col = await grep({ pattern: 'tidy', path: 'src/app.ts' });
    expect(col.matches[0]).toMatchObject({ file: 'src/app.ts', line: 1, column: 23 });
  });

  it('filters by include and exclude globs, case-insensitively when asked, and reads literal text', async () => {
    const r = await grep({
      pattern: 'todo',
      case_insensitive: true,
      include: ['*.ts', '*.md'],
      exclude: '**/vendor/**',
    });
    expect(r.matches.map((m) => m.file)).toEqual(['docs/guide.md', 'src/app.ts']);
    const literal = await grep({ pattern: 'a = 1;', literal: true });
    expect(literal.matches.map((m) => m.file)).toEqual(['src/app.ts']);
    const paren = await grep({ pattern: '(', literal: true });
    expect(paren.matches.map((m) => m.file)).toEqual(['src/secret.txt', 'src/util.ts']);
  });

  it('shows a very long line around its match, cut to max_line_length', async () => {
    const r = await grep({ pattern: 'NEEDLE', max_line_length: 60 });
    expect(r.matches).toHaveLength(1);
    const content = r.matches[0]!.content;
    expect(content).toContain('NEEDLE');
    expect(content.length).toBeLessThanOrEqual(62);
    expect(content.startsWith('…') && content.endsWith('…')).toBe(true);
    expect(r.matches[0]!.column).toBe(200_001);
  });

  it('stops at max_matches and says more were found; skips files over max_file_bytes', async () => {
    expect(await grep({ pattern: 'TODO', max_matches: 2 })).toMatchObject({
      count: 2,
      truncated: true,
    });
    expect(await grep({ pattern: 'TODO', max_matches: 5 })).toMatchObject({
      count: 5,
      truncated: false,
    });
    const small = await grep({ pattern: 'NEEDLE', max_file_bytes: 1000 });
    expect(small).toMatchObject({ count: 0, skipped: { too_large: 1 } });
  });

  it('refuses a pattern RE2 does not read, naming the parameter to change', async () => {
    const err = await rejection(grep({ pattern: '(a)\\1' }));
    expect(err).toMatchObject({ code: 'INVALID_PATTERN', retryable: false });
    expect(err.hint).toContain('literal');
  });

  it('keeps to its time bound: SEARCH_TIMEOUT over a tree it cannot finish in time', async () => {
    const big = join(project, 'big');
    for (let d = 0; d < 20; d++) {
      await mkdir(join(big, `d${d}`), { recursive: true });
      await Promise.all(
        Array.from({ length: 150 }, (_, f) =>
          writeFile(join(big, `d${d}`, `f${f}.txt`), `${'word '.repeat(400)}\n`.repeat(20)),
        ),
      );
    }
    try {
      const err = await rejection(
        grep({ pattern: 'w(o|x)rd\\s+\\w+z', path: 'big', timeout: 0.001 }),
      );
      expect(err).toMatchObject({ code: 'SEARCH_TIMEOUT', retryable: false });
      expect(err.hint).toContain('timeout');
      // An abort stops it too, with the abort's reason.
      const controller = new AbortController();
      const pending = call(
        'dirigent/fs/grep',
        { pattern: 'w(o|x)rd\\s+\\w+z', path: 'big' },
        controller.signal,
      );
      controller.abort();
      expect((await rejection(pending)).code).toBe('CANCELLED');
    } finally {
      await rm(big, { recursive: true, force: true });
    }
  });
});
