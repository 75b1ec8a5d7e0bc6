import { pathMatcher } from '../path-matcher.js';
import { resolveSearchRoot } from '../resolve-search-root.js';
import type { ToolDefinition } from '../tool-definition.js';
import type { ToolExample } from '../tool-example.js';
import { walkProject } from '../walk-project.js';

const EXAMPLES: ToolExample[] = [
  {
    description: 'a name pattern matches at any depth; .gitignore and the defaults are respected',
    files: {
      '.gitignore': 'dist/\n',
      'src/app.ts': '',
      'src/lib/util.ts': '',
      'src/readme.md': '',
      'dist/app.ts': '',
      'node_modules/pkg/index.ts': '',
    },
    input: { pattern: '*.ts' },
    output: { files: ['src/app.ts', 'src/lib/util.ts'], count: 2, total: 2, truncated: false },
  },
  {
    description: 'a pattern with a slash matches paths below path; limit caps the list',
    files: { 'docs/a.md': '', 'docs/guide/b.md': '', 'docs/guide/c.md': '' },
    input: { pattern: 'guide/*.md', path: 'docs', limit: 1 },
    output: { files: ['docs/guide/b.md'], count: 1, total: 2, truncated: true },
  },
  {
    description: 'a path outside the project is refused',
    input: { pattern: '*', path: '../' },
    error: { code: 'PATH_OUTSIDE_PROJECT', retryable: false },
  },
];

/**
 * `dirigent/fs/glob`: the project's files under `path` (default: the whole project) whose path
 * below `path` matches `pattern` (picomatch globs; a pattern without `/` matches file names at
 * any depth, as RYE's `glob` does), as project-relative paths in path order: at most `limit`,
 * `total` counting all. What the ignore stack ignores is left out unless `no_ignore`: the
 * built-in defaults (`.git/`, `node_modules/`, `.dirigent/`, Python caches, …), every `.gitignore`
 * from the project root down, and `.ai/config/ignore`, which overrides them (`!dist/`). A `path`
 * inside an ignored folder is searched all the same, under the rules found from there down.
 * Symbolic links are neither listed nor followed.
 */
export const fsGlobTool: ToolDefinition = {
  itemId: 'dirigent/fs/glob',
  description: 'Finds project files whose path matches a glob pattern.',
  paramsSchema: {
    type: 'object',
    properties: {
      pattern: {
        type: 'string',
        minLength: 1,
        description: 'Glob, e.g. "*.ts" (any depth) or "src/**/*.md" (below path).',
      },
      path: {
        type: 'string',
        minLength: 1,
        description: 'Folder to search (default: the project).',
      },
      limit: { type: 'integer', minimum: 1, maximum: 100000, default: 1000 },
      no_ignore: { type: 'boolean', default: false, description: 'List ignored files too.' },
    },
    required: ['pattern'],
    additionalProperties: false,
  },
  examples: EXAMPLES,
  async execute(params, ctx) {
    const root = await resolveSearchRoot(ctx.projectDir, params.path as string | undefined, {
      allowFile: false,
    });
    const matches = pathMatcher(params.pattern as string, 'pattern');
    const found = await walkProject({
      projectDir: ctx.projectDir,
      start: root.rel,
      noIgnore: params.no_ignore === true,
      signal: ctx.signal,
      keep: matches,
    });
    const limit = params.limit as number;
    const listed = found.length > limit ? found.slice(0, limit) : found;
    return {
      files: listed,
      count: listed.length,
      total: found.length,
      truncated: found.length > limit,
    };
  },
};
