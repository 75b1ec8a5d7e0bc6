/**
 * Which files the search tools (`dirigent/fs/ls`, `glob`, `grep`) pass over: the built-in
 * defaults, the project's `.gitignore` files (each applying below its own folder, deeper ones
 * overriding shallower ones, as git reads them), and the project's override `.ai/config/ignore`,
 * which comes last and so wins (`!dist/` brings back a folder the others ignore). All are in
 * gitignore syntax and matched by the `ignore` package, which follows `git check-ignore`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type ignoreFactory from 'ignore';
import type { Ignore } from 'ignore';
import { lazyPackage } from '../lazy-package.js';

const ignorePackage = lazyPackage<typeof ignoreFactory>('ignore');

/** What every search passes over unless a `.gitignore` or the override brings it back. */
export const DEFAULT_IGNORES: readonly string[] = [
  '.git/',
  '.hg/',
  '.svn/',
  '.dirigent/',
  'node_modules/',
  '__pycache__/',
  '.venv/',
  'venv/',
  '.tox/',
  '.nox/',
  '.eggs/',
  '*.egg-info/',
  '.pytest_cache/',
  '.mypy_cache/',
  '.ruff_cache/',
  '.DS_Store',
];

/** The project's override, relative to its root: gitignore lines that take precedence. */
export const IGNORE_OVERRIDE_FILE = '.ai/config/ignore';

/** The rules of one file, rebased onto the stack's base folder. */
interface Block {
  depth: number;
  rules: string[];
  /** Longest literal text each positive rule needs in a path it matches ('' when it has none). */
  literals: string[];
}

/**
 * The ignore rules in force for a walk, in gitignore order. Paths are project-relative with `/`.
 * Rules of a `.gitignore` in `sub/` are rebased (`*.log` becomes `sub/**\/*.log`, `/out` becomes
 * `sub/out`), so that one matcher answers for the whole tree and git's precedence (later rules,
 * and deeper files, win; nothing under an ignored folder comes back) holds across files.
 *
 * A path that holds none of the literal texts the positive rules need (`node_modules`, `.log`, …)
 * cannot be ignored, so it is answered without the matcher: most paths of a tree, which keeps a
 * walk of 100,000 files near the speed of listing them. Negative rules only bring paths back,
 * so they need no literal.
 */
export class IgnoreStack {
  private readonly blocks: Block[] = [];
  private readonly gitignoreBlocks: Block[] = [];
  private override: Block | undefined;
  private matcher: Ignore | undefined;
  /** Matches a path that may be ignored; undefined when some rule has no literal to require. */
  private prefilter: RegExp | undefined;
  /**
   * Whether every rule matches by name alone (no `/` but a final one): then, the folders above a
   * path having passed already (a walk prunes ignored ones), its name decides, and the matcher
   * is asked about the name, which it answers faster (no folders to split) and from its cache for
   * names seen before.
   */
  private byName = true;

  /**
   * @param base the project-relative folder the rules apply below ('' for the whole project):
   * a walk that starts inside an ignored folder applies only the rules found from there down.
   */
  private constructor(
    private readonly projectDir: string,
    private readonly base: string,
  ) {}

  /**
   * The stack for a walk of the project-relative folder `start`: the defaults, the override, and
   * the `.gitignore` of every folder from the project root down to `start`. When `start` itself
   * lies in an ignored folder (asked for by name), the walk is rooted there: the rules of the
   * folders above, which ignore it, do not apply inside it.
   */
  static forWalk(projectDir: string, start: string): IgnoreStack {
    const full = new IgnoreStack(projectDir, '');
    full.load(true);
    const parts = start === '' ? [] : start.split('/');
    for (let i = 0; i <= parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (i > 0 && full.ignores(dir, true)) {
        const rooted = new IgnoreStack(projectDir, start);
        rooted.load(false);
        rooted.enter(start);
        return rooted;
      }
      full.enter(dir);
    }
    return full;
  }

  /** Adds the `.gitignore` of project-relative folder `dir` (entered by a walk), if it has one. */
  enter(dir: string): void {
    const file = join(this.projectDir, dir, '.gitignore');
    // statSync with throwIfNoEntry: most folders have none, and an exception per folder is slow.
    if (statSync(file, { throwIfNoEntry: false }) === undefined) return;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return; // unreadable (a folder named .gitignore, no permission): as if absent
    }
    const at = this.relative(dir);
    if (at === undefined) return;
    this.gitignoreBlocks.push(block(text, at));
    // Shallower files first: in one matcher the later rule wins, as the deeper file does in git.
    this.gitignoreBlocks.sort((a, b) => a.depth - b.depth);
    this.rebuild();
  }

  /**
   * Whether project-relative `path` (a folder when `isDir`) is ignored, for a path whose folders
   * are not (a walk asks about a folder before it enters it, and {@link forWalk} about `start`'s).
   */
  ignores(path: string, isDir: boolean): boolean {
    const rel = this.relative(path);
    if (rel === undefined || rel === '') return false;
    const subject = this.byName ? rel.slice(rel.lastIndexOf('/') + 1) : rel;
    if (this.prefilter !== undefined && !this.prefilter.test(subject)) return false;
    this.matcher ??= this.build();
    return this.matcher.ignores(isDir ? `${subject}/` : subject);
  }

  private load(withOverride: boolean): void {
    this.blocks.push(block(DEFAULT_IGNORES.join('\n'), ''));
    if (withOverride) {
      const file = join(this.projectDir, IGNORE_OVERRIDE_FILE);
      if (existsSync(file)) this.override = block(readFileSync(file, 'utf8'), '');
    }
    this.rebuild();
  }

  private all(): Block[] {
    return [...this.blocks, ...this.gitignoreBlocks, ...(this.override ? [this.override] : [])];
  }

  private rebuild(): void {
    this.matcher = undefined;
    const blocks = this.all();
    this.byName = blocks.every((b) => b.rules.every((r) => !r.replace(/\/+$/, '').includes('/')));
    const literals = blocks.flatMap((b) => b.literals);
    this.prefilter = literals.includes('')
      ? undefined
      : new RegExp([...new Set(literals)].map(escapeRegExp).join('|') || '(?!)');
  }

  private build(): Ignore {
    // git is case-sensitive on the file systems Dirigent runs on; `ignore` is not by default.
    const matcher = ignorePackage()({ ignorecase: false });
    for (const b of this.all()) matcher.add(b.rules);
    return matcher;
  }

  /** `path` relative to the stack's base; undefined when it is not below it. */
  private relative(path: string): string | undefined {
    if (this.base === '') return path;
    if (path === this.base) return '';
    return path.startsWith(`${this.base}/`) ? path.slice(this.base.length + 1) : undefined;
  }
}

/** The rules of one gitignore `text` found in folder `dir` (relative to the stack's base). */
function block(text: string, dir: string): Block {
  const rules: string[] = [];
  const literals: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/(?<!\\)\s+$/, '');
    if (line === '' || line.startsWith('#')) continue;
    const negative = line.startsWith('!');
    const body = negative ? line.slice(1) : line;
    rules.push(`${negative ? '!' : ''}${rebase(body, dir)}`);
    if (!negative) literals.push(literalOf(body));
  }
  return { depth: dir === '' ? 0 : dir.split('/').length, rules, literals };
}

/** A rule of a `.gitignore` in `dir`, written as a rule of the base folder's. */
function rebase(body: string, dir: string): string {
  if (dir === '') return body;
  // A slash before the end anchors the rule at its file's folder; otherwise it matches any depth.
  const anchored = body.replace(/\/+$/, '').includes('/');
  return anchored ? `${dir}/${body.replace(/^\//, '')}` : `${dir}/**/${body}`;
}

/**
 * The longest run of plain characters in a rule: any path the rule matches (or whose folder it
 * matches) contains it. Bracket expressions, wildcards, escapes and slashes end a run.
 */
function literalOf(body: string): string {
  const pieces = body.replace(/\[[^\]]*\]/g, '*').split(/[*?\\/[\]]/);
  return pieces.reduce((a, b) => (b.length > a.length ? b : a), '');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
