import { lstat, readdir, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { abortError } from '../abort-error.js';
import { IgnoreStack } from '../ignore-stack.js';
import { resolveSearchRoot } from '../resolve-search-root.js';
import type { ToolDefinition } from '../tool-definition.js';
import type { ToolExample } from '../tool-example.js';
import { ignoreMissing } from '../../errors/ignore-expected.js';

const EXAMPLES: ToolExample[] = [
  {
    description: 'folders first, then files, by name; .gitignore and the defaults are respected',
    files: {
      '.gitignore': '*.log\n',
      'b.txt': 'hello',
      'a/x.md': '',
      'debug.log': '',
      'node_modules/m/i.js': '',
    },
    input: {},
    output: {
      path: '',
      entries: [
        { name: 'a', path: 'a', type: 'directory' },
        { name: '.gitignore', path: '.gitignore', type: 'file', size: 6 },
        { name: 'b.txt', path: 'b.txt', type: 'file', size: 5 },
      ],
      count: 3,
      ignored: 2,
      truncated: false,
    },
  },
  {
    description: 'a file is not a folder',
    files: { 'b.txt': 'hello' },
    input: { path: 'b.txt' },
    error: { code: 'NOT_A_DIRECTORY', retryable: false },
  },
];

/** One entry of a listing. */
interface Entry {
  name: string;
  path: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
  modified: string;
  /** A link's project-relative target, or null when it points outside the project or nowhere. */
  target?: string | null;
}

/**
 * `dirigent/fs/ls`: the entries of one folder of the project (default: its root), folders first,
 * then by name (case-insensitive, as RYE's `ls`), each with its project-relative `path`, `type`,
 * `size` in bytes and `modified` time (ISO 8601). A symbolic link is listed as such, not followed;
 * its `target` is given when it lies in the project (null otherwise: the listing does not tell
 * what lies outside). Ignored entries (see `dirigent/fs/glob`) are left out and counted in
 * `ignored`, unless `no_ignore`. At most `limit` entries; `truncated` says there were more.
 */
export const fsLsTool: ToolDefinition = {
  itemId: 'dirigent/fs/ls',
  description: 'Lists a project folder with sizes, kinds and modification times.',
  paramsSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', minLength: 1, description: 'Folder to list (default: the project).' },
      limit: { type: 'integer', minimum: 1, maximum: 100000, default: 1000 },
      no_ignore: { type: 'boolean', default: false, description: 'List ignored entries too.' },
    },
    additionalProperties: false,
  },
  examples: EXAMPLES,
  async execute(params, ctx) {
    const root = await resolveSearchRoot(ctx.projectDir, params.path as string | undefined, {
      allowFile: false,
    });
    const stack =
      params.no_ignore === true ? undefined : IgnoreStack.forWalk(ctx.projectDir, root.rel);
    const dirents = await readdir(root.abs, { withFileTypes: true });
    if (ctx.signal.aborted) throw abortError(ctx.signal, `listing "${root.rel || '.'}"`);
    const realProject = await realpath(resolve(ctx.projectDir));
    const entries: Entry[] = [];
    let ignored = 0;
    for (const d of dirents) {
      const path = root.rel === '' ? d.name : `${root.rel}/${d.name}`;
      if (stack?.ignores(path, d.isDirectory()) === true) {
        ignored++;
        continue;
      }
      const full = join(root.abs, d.name);
      const stats = await lstat(full).catch(ignoreMissing);
      if (stats === undefined) continue; // removed while listing
      const type = stats.isSymbolicLink()
        ? 'symlink'
        : stats.isDirectory()
          ? 'directory'
          : stats.isFile()
            ? 'file'
            : 'other';
      const entry: Entry = {
        name: d.name,
        path,
        type,
        size: stats.size,
        modified: stats.mtime.toISOString(),
      };
      if (type === 'symlink') entry.target = await linkTarget(full, realProject);
      entries.push(entry);
    }
    entries.sort(
      (a, b) =>
        Number(b.type === 'directory') - Number(a.type === 'directory') ||
        compare(a.name.toLowerCase(), b.name.toLowerCase()) ||
        compare(a.name, b.name),
    );
    const limit = params.limit as number;
    const listed = entries.length > limit ? entries.slice(0, limit) : entries;
    return {
      path: root.rel,
      entries: listed,
      count: listed.length,
      ignored,
      truncated: entries.length > limit,
    };
  },
};

/** The project-relative real target of the link at `full`, or null outside the project. */
async function linkTarget(full: string, realProject: string): Promise<string | null> {
  const real = await realpath(full).catch(() => {
    /* A link to nothing, or a loop: it has no target in the project. */
    return undefined;
  });
  if (real === undefined) return null;
  const rel = relative(realProject, real);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
  return rel.split(sep).join('/');
}

/** Code-unit order: the same on every machine, whatever its locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
