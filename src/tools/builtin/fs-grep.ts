import { resolve } from 'node:path';
import { DirigentError, ErrorCode } from '../../errors/index.js';
import { abortError } from '../abort-error.js';
import { capLine } from '../cap-text.js';
import { pathMatcher } from '../path-matcher.js';
import { resolveSearchRoot } from '../resolve-search-root.js';
import {
  eachMatchingLine,
  lineText,
  linesAfter,
  linesBefore,
  requiredText,
  textFinder,
} from '../text-finder.js';
import { TextFileReader } from '../text-file-reader.js';
import type { ToolDefinition } from '../tool-definition.js';
import { walkProject } from '../walk-project.js';
import type { ToolExample } from '../tool-example.js';

/** Characters of matched lines and context a result holds at most; more sets `truncated`. */
const OUTPUT_BUDGET = 1024 * 1024;
/** How long the search reads and matches before it lets the event loop run (ms). */
const SLICE_MS = 8;

const globs = (what: string) => ({
  description: `${what}: one glob or a list; a glob without "/" matches file names at any depth.`,
  anyOf: [
    { type: 'string', minLength: 1 },
    { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, maxItems: 100 },
  ],
});
const lines = (what: string) => ({
  type: 'integer',
  minimum: 0,
  maximum: 20,
  description: `Lines of context ${what} each match (default: context).`,
});

const EXAMPLES: ToolExample[] = [
  {
    description: 'a regular expression, with a line of context on each side',
    files: { 'notes/a.md': 'intro\nTODO: write the tests\noutro\n', 'notes/b.md': 'done\n' },
    input: { pattern: 'TODO: \\w+', context: 1 },
    output: {
      matches: [
        {
          file: 'notes/a.md',
          line: 2,
          column: 1,
          content: 'TODO: write the tests',
          before: ['intro'],
          after: ['outro'],
        },
      ],
      count: 1,
      files_matched: 1,
      truncated: false,
    },
  },
  {
    description: 'case-insensitive, only *.ts files; build/ is ignored by .gitignore',
    files: {
      '.gitignore': 'build/\n',
      'src/app.ts': 'const Port = 80;\n',
      'src/app.md': 'port 80\n',
      'build/app.ts': 'const port = 1;\n',
    },
    input: { pattern: 'port', case_insensitive: true, include: '*.ts' },
    output: { matches: [{ file: 'src/app.ts', line: 1, column: 7, content: 'const Port = 80;' }] },
  },
  {
    description: 'RE2 has no look-ahead: the pattern is refused before any file is read',
    input: { pattern: 'foo(?=bar)' },
    error: { code: 'INVALID_PATTERN', retryable: false },
  },
];

/** One line with a match, as the result lists it. */
export interface GrepMatch {
  file: string;
  line: number;
  column: number;
  content: string;
  before?: string[];
  after?: string[];
}

/**
 * `dirigent/fs/grep`: searches the files under `path` (or the one file `path` names) for a
 * regular expression in RE2 syntax (ripgrep's and Go's: no look-around, no back-references),
 * whose matching time is linear in the text searched, and for which the whole search has a time
 * bound (`timeout`, a fatal `SEARCH_TIMEOUT` past it). Files are searched in path order; each
 * matching line is listed once with its first match's column (1-based), cut to
 * `max_line_length` around the match, and `context` (or `before` / `after`) lines around it.
 * Ignored files (see `dirigent/fs/glob`) are passed over unless `no_ignore`; binary files (a NUL
 * in their first 8,000 bytes), files over `max_file_bytes` and unreadable ones are skipped and
 * counted. At most `max_matches` lines, and about 1 MiB of text, are returned; `truncated` says
 * more were found.
 */
export const fsGrepTool: ToolDefinition = {
  itemId: 'dirigent/fs/grep',
  description: 'Searches project files for a regular expression (RE2), with context lines.',
  paramsSchema: {
    type: 'object',
    properties: {
      pattern: {
        type: 'string',
        minLength: 1,
        description: 'Regular expression (RE2 syntax); plain text with literal.',
      },
      path: {
        type: 'string',
        minLength: 1,
        description: 'Folder or file to search (default: the project).',
      },
      include: globs('Only files matching'),
      exclude: globs('Files to pass over'),
      literal: { type: 'boolean', default: false, description: 'Read pattern as plain text.' },
      case_insensitive: { type: 'boolean', default: false },
      context: {
        ...lines('before and after'),
        default: 0,
        description: 'Lines of context before and after each match.',
      },
      before: lines('before'),
      after: lines('after'),
      max_matches: { type: 'integer', minimum: 1, maximum: 10000, default: 100 },
      max_line_length: {
        type: 'integer',
        minimum: 20,
        maximum: 100000,
        default: 500,
        description: 'Characters of a line shown, around its match.',
      },
      max_file_bytes: {
        type: 'integer',
        minimum: 1,
        maximum: 268435456,
        default: 8388608,
        description: 'Larger files are skipped.',
      },
      timeout: {
        type: 'number',
        exclusiveMinimum: 0,
        maximum: 3600,
        default: 30,
        description: 'Seconds the search may take.',
      },
      no_ignore: { type: 'boolean', default: false, description: 'Search ignored files too.' },
    },
    required: ['pattern'],
    additionalProperties: false,
  },
  examples: EXAMPLES,
  async execute(params, ctx) {
    const pattern = params.pattern as string;
    const how = {
      literal: params.literal === true,
      caseInsensitive: params.case_insensitive === true,
    };
    const find = textFinder(pattern, how);
    const needle = requiredText(pattern, how);
    const root = await resolveSearchRoot(ctx.projectDir, params.path as string | undefined, {
      allowFile: true,
    });
    const globs = (name: string) =>
      params[name] === undefined ? undefined : pathMatcher(params[name] as string | string[], name);
    const include = globs('include');
    const exclude = globs('exclude');
    const seconds = params.timeout as number;
    const deadline = Date.now() + seconds * 1000;
    // The listing counts against the time bound too.
    const clock = AbortSignal.timeout(seconds * 1000);
    const files = root.isDirectory
      ? await walkProject({
          projectDir: ctx.projectDir,
          start: root.rel,
          noIgnore: params.no_ignore === true,
          signal: AbortSignal.any([ctx.signal, clock]),
          keep: (path) => (include === undefined || include(path)) && exclude?.(path) !== true,
        }).catch((err: unknown) => {
          throw clock.aborted && !ctx.signal.aborted ? timedOut(pattern, seconds, 0, 0) : err;
        })
      : [root.rel];
    const context = params.context as number;
    const before = (params.before as number | undefined) ?? context;
    const after = (params.after as number | undefined) ?? context;
    const maxMatches = params.max_matches as number;
    const maxLine = params.max_line_length as number;
    const reader = new TextFileReader(
      params.max_file_bytes as number,
      needle === undefined ? undefined : Buffer.from(needle),
    );
    const dir = `${resolve(ctx.projectDir)}/`;
    const matches: GrepMatch[] = [];
    const skipped = { binary: 0, too_large: 0, unreadable: 0 };
    let filesSearched = 0;
    let filesMatched = 0;
    let budget = OUTPUT_BUDGET;
    let truncated = false;
    let sliceEnd = Date.now() + SLICE_MS;
    for (const file of files) {
      if (truncated) break;
      if (Date.now() >= sliceEnd) {
        await new Promise((r) => setImmediate(r));
        if (ctx.signal.aborted) throw abortError(ctx.signal, `grep for ${JSON.stringify(pattern)}`);
        if (Date.now() >= deadline) throw timedOut(pattern, seconds, filesSearched, matches.length);
        sliceEnd = Date.now() + SLICE_MS;
      }
      const read = reader.read(dir + file);
      if (read.kind === 'without') {
        filesSearched++;
        continue;
      }
      if (read.kind !== 'text') {
        skipped[read.kind]++;
        continue;
      }
      filesSearched++;
      const text = read.text;
      let matchedHere = false;
      eachMatchingLine(text, find(text), (m) => {
        if (matches.length === maxMatches || budget <= 0) {
          truncated = true;
          return false;
        }
        if (!matchedHere) filesMatched++;
        matchedHere = true;
        const found: GrepMatch = {
          file,
          line: m.line,
          column: m.column + 1,
          content: capLine(lineText(text, m.start, m.end), maxLine, m.column),
        };
        if (before > 0)
          found.before = linesBefore(text, m.start, before).map((l) => capLine(l, maxLine));
        if (after > 0) found.after = linesAfter(text, m.end, after).map((l) => capLine(l, maxLine));
        budget -= found.content.length + charsOf(found.before) + charsOf(found.after);
        matches.push(found);
        return true;
      });
    }
    return {
      matches,
      count: matches.length,
      files_searched: filesSearched,
      files_matched: filesMatched,
      truncated,
      skipped,
    };
  },
};

function charsOf(lines: string[] | undefined): number {
  return lines === undefined ? 0 : lines.reduce((n, l) => n + l.length, 0);
}

function timedOut(
  pattern: string,
  seconds: number,
  searched: number,
  found: number,
): DirigentError {
  return DirigentError.fatal(
    ErrorCode.SEARCH_TIMEOUT,
    `grep for ${JSON.stringify(pattern)} took longer than its timeout of ${seconds} s (${searched} files searched, ${found} matching lines found)`,
    {
      hint: 'Narrow the search with path or include, or raise timeout.',
      details: { files_searched: searched, matches: found },
    },
  );
}
