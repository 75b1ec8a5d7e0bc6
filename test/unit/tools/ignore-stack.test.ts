/**
 * The ignore stack reads .gitignore files as git does (checked against `git ls-files` on the same
 * tree), and its shortcuts (the literal prefilter, asking by name) never change an answer
 * (checked against the `ignore` package alone on generated rules and paths).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import ignore from 'ignore';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_IGNORES, IgnoreStack } from '../../../src/tools/ignore-stack.js';
import { walkProject } from '../../../src/tools/walk-project.js';

let project: string;
const write = (path: string, text = '') => {
  mkdirSync(dirname(join(project, path)), { recursive: true });
  writeFileSync(join(project, path), text);
};

beforeAll(() => {
  project = realpathSync(mkdtempSync(join(tmpdir(), 'dirigent-ignore-')));
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

describe('IgnoreStack', () => {
  it('lists what git lists: anchored, nested, negated, dir-only, ** and bracket rules', async () => {
    const tree = {
      '.gitignore': '/out\n*.tmp\n!important.tmp\ncache/\ndocs/**/draft-*.md\nlogs/[ab].txt\n',
      'out/a.js': '',
      'src/out/b.js': '',
      'x.tmp': '',
      'src/important.tmp': '',
      'cache/c': '',
      'src/cache/d': '',
      'cache.txt': '',
      'docs/draft-1.md': '',
      'docs/deep/draft-2.md': '',
      'docs/final.md': '',
      'logs/a.txt': '',
      'logs/c.txt': '',
      'pkg/.gitignore': '*.js\n!keep.js\n/local\n',
      'pkg/x.js': '',
      'pkg/keep.js': '',
      'pkg/sub/y.js': '',
      'pkg/local/z.md': '',
      'pkg/sub/local/w.md': '',
      'pkg/sub/.gitignore': '!y.js\n',
    };
    for (const [path, text] of Object.entries(tree)) write(path, text);
    execFileSync('git', ['init', '-q', project]);
    const byGit = execFileSync('git', ['ls-files', '--others', '--exclude-standard'], {
      cwd: project,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((l) => l !== '')
      .sort();
    const ours = await walkProject({
      projectDir: project,
      start: '',
      noIgnore: false,
      signal: new AbortController().signal,
    });
    expect(ours).toEqual(byGit);
    expect(ours).toContain('pkg/sub/y.js'); // brought back by the deeper file
    expect(ours).not.toContain('pkg/local/z.md'); // anchored at pkg/
    expect(ours).toContain('pkg/sub/local/w.md');
    rmSync(join(project, '.git'), { recursive: true, force: true });
  });

  it('the override file wins over .gitignore, and the defaults apply without any file', () => {
    write('.gitignore', 'dist/\n');
    write('.ai/config/ignore', '!dist/\nsecrets/\n');
    const stack = IgnoreStack.forWalk(project, '');
    expect(stack.ignores('dist', true)).toBe(false);
    expect(stack.ignores('secrets', true)).toBe(true);
    expect(stack.ignores('a/node_modules', true)).toBe(true);
    expect(stack.ignores('.git', true)).toBe(true);
    expect(stack.ignores('src/index.ts', false)).toBe(false);
    rmSync(join(project, '.ai'), { recursive: true, force: true });
  });

  it('answers as the ignore package does for any rules, about any path in folders a walk enters', () => {
    const segment = fc.constantFrom(
      'a',
      'b',
      'log',
      'node_modules',
      'x.log',
      'build',
      '.cache',
      'src',
      'A',
      'é',
    );
    const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join('/'));
    const rule = fc.oneof(
      segment,
      segment.map((s) => `*.${s}`),
      segment.map((s) => `/${s}`),
      segment.map((s) => `${s}/`),
      segment.map((s) => `!${s}`),
      fc.tuple(segment, segment).map(([a, b]) => `${a}/**/${b}`),
      fc.tuple(segment, segment).map(([a, b]) => `${a}[ab]${b}`),
      fc.constant('*'),
    );
    fc.assert(
      fc.property(
        fc.array(rule, { maxLength: 6 }),
        fc.array(path, { minLength: 1, maxLength: 10 }),
        (rules, paths) => {
          write('.gitignore', rules.join('\n'));
          const stack = IgnoreStack.forWalk(project, '');
          const reference = ignore({ ignorecase: false })
            .add([...DEFAULT_IGNORES])
            .add(rules);
          for (const p of paths) {
            // As a walk asks: only about paths whose folders it entered.
            const parts = p.split('/');
            const folders = parts.slice(0, -1).map((_, i) => `${parts.slice(0, i + 1).join('/')}/`);
            if (folders.some((f) => reference.ignores(f))) continue;
            expect(stack.ignores(p, false), `${p} under ${JSON.stringify(rules)}`).toBe(
              reference.ignores(p),
            );
            expect(stack.ignores(p, true)).toBe(reference.ignores(`${p}/`));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
