import { readFile, stat } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import type * as DiffPackage from 'diff';
import { lazyPackage } from '../../lazy-package.js';
import { DirigentError, ErrorCode } from '../../errors/index.js';
import { applyLineChanges, type LineChange } from '../apply-line-changes.js';
import { capText } from '../cap-text.js';
import { locateEdit, type EditLocation } from '../locate-edit.js';
import { resolveInProject } from '../resolve-in-project.js';
import { BINARY_SNIFF_BYTES } from '../text-file-reader.js';
import type { ToolDefinition } from '../tool-definition.js';
import type { ToolExample } from '../tool-example.js';
import { writeFileAtomic } from '../write-file-atomic.js';
import { binaryFile, fileNotFound, fileTooLarge, notAFile } from '../../errors/file-errors.js';

const diffPackage = lazyPackage<typeof DiffPackage>('diff');

/** Files larger than this are not edited in memory. */
const MAX_EDIT_FILE = 16 * 1024 * 1024;
/** Characters of the diff a result holds at most. */
const MAX_DIFF_CHARS = 64 * 1024;

const EXAMPLES: ToolExample[] = [
  {
    description: 'an exact replacement, shown as a diff without writing (dry_run)',
    files: { 'app.py': 'def main():\n    print("hi")\n' },
    input: { path: 'app.py', old: 'print("hi")', new: 'print("hello")', dry_run: true },
    output: {
      path: 'app.py',
      match: 'exact',
      replacements: 1,
      written: false,
      diff: '--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def main():\n-    print("hi")\n+    print("hello")\n',
    },
  },
  {
    description: 'old copied with other indentation still matches once; new is re-indented',
    files: { 'app.py': 'def main():\n    if ok:\n        run()\n' },
    input: { path: 'app.py', old: 'if ok:\n    run()', new: 'if ok:\n    run(fast=True)' },
    output: { match: 'indentation', replacements: 1, written: true },
  },
  {
    description: 'a text found twice is refused, with both places listed',
    files: { 'a.txt': 'x = 1\ny = 2\nx = 1\n' },
    input: { path: 'a.txt', old: 'x = 1', new: 'x = 3' },
    error: { code: 'AMBIGUOUS_MATCH', retryable: false },
  },
  {
    description: "line ranges, as RYE's edit_lines: line 2 replaced, a line inserted before line 1",
    files: { 'a.txt': 'one\ntwo\nthree\n' },
    input: {
      path: 'a.txt',
      changes: [
        { start_line: 2, end_line: 2, new_content: 'TWO' },
        { start_line: 1, end_line: 0, new_content: 'zero' },
      ],
    },
    output: { changes_applied: 2, lines_changed: 2, written: true },
  },
];

const CHANGE = {
  type: 'object',
  properties: {
    start_line: { type: 'integer', minimum: 1 },
    end_line: { type: 'integer', minimum: 0 },
    line_id: { type: 'string', pattern: '^[0-9a-f]{6}$' },
    start_line_id: { type: 'string', pattern: '^[0-9a-f]{6}$' },
    end_line_id: { type: 'string', pattern: '^[0-9a-f]{6}$' },
    new_content: { type: 'string' },
  },
  required: ['new_content'],
  additionalProperties: false,
};

/**
 * `dirigent/fs/edit`: changes a text file of the project in one of two ways. A targeted
 * replacement of `old` by `new`: exact first, then with lines compared leniently (trailing
 * whitespace, then indentation and inner spacing; `new` is re-indented to the file's
 * indentation), `match` saying which. `old` found more than once is refused
 * (`AMBIGUOUS_MATCH`, the places listed) unless `replace_all`; not found, `NO_MATCH`. Or line
 * ranges as RYE's `edit_lines` (`changes`: `start_line`..`end_line`, or RYE's line ids, and
 * `new_content`). The file is written atomically (a temporary file renamed over it), its line
 * endings and permissions kept; `dry_run` writes nothing. The result holds the unified diff.
 */
export const fsEditTool: ToolDefinition = {
  itemId: 'dirigent/fs/edit',
  description:
    'Edits a project file: one text changed into another (exact, then lenient), or lines.',
  paramsSchema: {
    type: 'object',
    properties: {
      file_path: { type: 'string', minLength: 1 },
      path: { type: 'string', minLength: 1, description: 'Alias of file_path (RYE).' },
      old: { type: 'string', minLength: 1, description: 'Text to replace.' },
      new: { type: 'string', description: 'Text to put in its place.' },
      replace_all: { type: 'boolean', default: false, description: 'Replace every place of old.' },
      changes: {
        type: 'array',
        items: CHANGE,
        minItems: 1,
        maxItems: 1000,
        description: 'Line-range edits (RYE edit_lines).',
      },
      dry_run: { type: 'boolean', default: false, description: 'Return the diff, write nothing.' },
    },
    anyOf: [{ required: ['file_path'] }, { required: ['path'] }],
    additionalProperties: false,
  },
  examples: EXAMPLES,
  async execute(params, ctx) {
    const given = (params.file_path ?? params.path) as string;
    const path = await resolveInProject(ctx.projectDir, given, 'write');
    const rel = relative(resolve(ctx.projectDir), path).split(sep).join('/');
    const text = await readText(path, given);
    const changes = params.changes as LineChange[] | undefined;
    const byText = params.old !== undefined || params.new !== undefined;
    if (
      byText === (changes !== undefined) ||
      (byText && (params.old === undefined || params.new === undefined))
    ) {
      throw DirigentError.fatal(
        ErrorCode.INVALID_PARAMS,
        `dirigent/fs/edit takes either old and new, or changes`,
        {
          hint: 'Give old and new (a text to replace), or changes (line ranges), not both.',
        },
      );
    }
    let updated: string;
    let summary: Record<string, unknown>;
    if (changes !== undefined) {
      const done = applyLineChanges(text, changes);
      updated = done.text;
      summary = { changes_applied: done.changesApplied, lines_changed: done.linesChanged };
    } else {
      const old = params.old as string;
      if (old === params.new) {
        throw DirigentError.fatal(
          ErrorCode.INVALID_PARAMS,
          'old and new are the same text: nothing would change',
          {
            hint: 'Set new to the text old should become.',
          },
        );
      }
      const found = locateEdit(text, old, params.new as string);
      checkFound(found, rel, old, text, params.replace_all === true);
      updated = splice(text, found);
      summary = { match: found.kind, replacements: found.sites.length };
    }
    const dryRun = params.dry_run === true;
    if (!dryRun && updated !== text) await writeFileAtomic(path, updated);
    const patch = diffPackage().createTwoFilesPatch(
      `a/${rel}`,
      `b/${rel}`,
      text,
      updated,
      undefined,
      undefined,
      { context: 3 },
    );
    // Drop the `Index:`/`===` header lines: a diff reads as `git diff` prints one.
    const diff = capText(patch.slice(patch.indexOf('--- ')), MAX_DIFF_CHARS);
    return {
      path: rel,
      ...summary,
      written: !dryRun && updated !== text,
      dry_run: dryRun,
      diff: diff.text,
      ...(diff.truncated && { diff_truncated: true }),
    };
  },
};

/** The file's text; missing, a folder, too large or binary files are fatal errors naming `path`. */
async function readText(path: string, given: string): Promise<string> {
  const hint = 'Set path to an existing file of the project; dirigent/fs/write creates files.';
  const stats = await stat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT' && err.code !== 'ENOTDIR') throw err;
    throw fileNotFound(`File "${given}"`, { path, hint });
  });
  if (stats.isDirectory()) throw notAFile(given, { path, hint });
  if (stats.size > MAX_EDIT_FILE) {
    throw fileTooLarge(given, stats.size, MAX_EDIT_FILE, 'an edit', {
      path,
      hint: 'Edit a smaller file, or change this one with dirigent/shell/bash.',
    });
  }
  const data = await readFile(path);
  if (data.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
    throw binaryFile(given, 'edits change text', { path, hint: 'Set path to a text file.' });
  }
  return data.toString('utf8');
}

/** Refuses an edit whose `old` is nowhere in the file, or in several places without `replaceAll`. */
function checkFound(
  found: EditLocation,
  rel: string,
  old: string,
  text: string,
  replaceAll: boolean,
): void {
  if (found.sites.length === 1 || (found.sites.length > 1 && replaceAll)) return;
  if (found.sites.length === 0) {
    const first =
      old
        .split('\n')
        .find((l) => l.trim() !== '')
        ?.trim() ?? '';
    const near = text
      .split('\n')
      .flatMap((l, i) => (first !== '' && l.includes(first) ? [i + 1] : []))
      .slice(0, 5);
    throw DirigentError.fatal(
      ErrorCode.NO_MATCH,
      `old is not in ${rel}, not even with whitespace and indentation set aside`,
      {
        hint:
          near.length > 0
            ? `old's first line is at line ${near.join(', ')}, but the lines after it differ: read the file (dirigent/fs/read) and copy old from it.`
            : 'Read the file (dirigent/fs/read) and copy old from it exactly.',
        details: { path: rel, first_line_at: near },
      },
    );
  }
  const candidates = found.sites.map((s) => ({ line: s.line, text: firstLine(text, s.start) }));
  throw DirigentError.fatal(
    ErrorCode.AMBIGUOUS_MATCH,
    `old matches ${found.sites.length} places in ${rel} (${found.kind}): ${candidates.map((c) => `line ${c.line}: ${JSON.stringify(c.text)}`).join('; ')}`,
    {
      hint: 'Add lines around old so that it matches one place, or set replace_all to true to change every one.',
      details: { path: rel, match: found.kind, candidates },
    },
  );
}

function firstLine(text: string, start: number): string {
  const end = text.indexOf('\n', start);
  const line = text.slice(start, end === -1 ? undefined : end).replace(/\r$/, '');
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/** `text` with each site replaced (sites do not overlap and come in order). */
function splice(text: string, found: EditLocation): string {
  let out = '';
  let at = 0;
  for (const site of found.sites) {
    out += text.slice(at, site.start) + site.replacement;
    at = site.end;
  }
  return out + text.slice(at);
}
