/**
 * RYE's file-system and web tools under their own names (`rye/file-system/read`, …,
 * `rye/web/webfetch`), taking RYE's parameter names and answering with RYE's result fields
 * (`success`, `output`, …) beside the native tool's. Each maps its call onto a native built-in
 * and runs it through a dispatcher of the built-ins, so the native schema's checks and defaults
 * apply. They stand in only where no space holds RYE's own file of that id (see `RyeAliases`).
 */
import { stat } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import { DirigentError, ErrorCode } from '../errors/index.js';
import { capText } from './cap-text.js';
import { lineId } from './line-id.js';
import { resolveInProject } from './resolve-in-project.js';
import { runNative, ryeAlias, withParams } from './rye-alias.js';
import type { ToolContext, ToolDefinition } from './tool-definition.js';

/** RYE's cap on the text of `output` (its read and bash tools cut there). */
const RYE_OUTPUT_CHARS = 51200;

const NOTES = { 'notes.txt': 'one\ntwo\n' };

/** RYE's tools, by RYE's item ids. */
export const RYE_ALIAS_TOOLS: readonly ToolDefinition[] = [
  ryeAlias(
    'rye/file-system/read',
    'dirigent/fs/read',
    'Reads a file with RYE line ids',
    [
      {
        description: "RYE's parameters; lines come with RYE's line ids",
        files: NOTES,
        input: { path: 'notes.txt', offset: 2 },
        output: {
          success: true,
          output: '[LID:981728] two',
          line_count: 1,
          total_lines: 2,
          offset: 2,
        },
      },
    ],
    async (params, ctx) => {
      const r = await runNative('dirigent/fs/read', withParams(params, [], { limit: 2000 }), ctx);
      const first = r.offset as number;
      const lines = (r.content as string).replace(/\r?\n$/, '').split(/\r?\n/);
      const text =
        (r.content as string) === ''
          ? ''
          : lines.map((l, i) => `[LID:${lineId(first + i, l)}] ${l}`).join('\n');
      const output = capText(text, RYE_OUTPUT_CHARS);
      return {
        success: true,
        ...r,
        output: output.text,
        truncated: (r.truncated as boolean) || output.truncated,
      };
    },
  ),
  ryeAlias(
    'rye/file-system/write',
    'dirigent/fs/write',
    'Writes one file, or several (files)',
    [
      {
        description: "RYE's batch mode: files, each with its path and content",
        input: {
          files: [
            { path: 'a.txt', content: 'a' },
            { file_path: 'b/c.txt', content: 'bc' },
          ],
        },
        output: { success: true, files_written: 2, files_total: 2 },
      },
    ],
    async (params, ctx) => {
      const files = params.files as
        | { path?: string; file_path?: string; content: string }[]
        | undefined;
      if (files === undefined) return writeOne(params, ctx);
      const results = [];
      for (const f of files) results.push(await writeOne(f, ctx));
      return { success: true, files_written: results.length, files_total: files.length, results };
    },
    {
      files: {
        type: 'array',
        minItems: 1,
        maxItems: 1000,
        items: {
          type: 'object',
          properties: {
            path: { type: 'string', minLength: 1 },
            file_path: { type: 'string', minLength: 1 },
            content: { type: 'string' },
          },
          required: ['content'],
          additionalProperties: false,
        },
      },
    },
  ),
  ryeAlias(
    'rye/file-system/edit_lines',
    'dirigent/fs/edit',
    'Edits lines by number or by RYE line id',
    [
      {
        description: "RYE's changes, by the line id read gave",
        files: NOTES,
        input: { path: 'notes.txt', changes: [{ line_id: '981728', new_content: 'TWO' }] },
        output: { success: true, changes_applied: 1, lines_changed: 1 },
      },
    ],
    async (params, ctx) => {
      const r = await runNative('dirigent/fs/edit', params, ctx);
      return { success: true, ...r, output: r.diff };
    },
  ),
  ryeAlias(
    'rye/file-system/ls',
    'dirigent/fs/ls',
    'Lists a folder',
    [
      {
        description: "RYE's entries: name is the project-relative path; folders end in / in output",
        files: { 'src/a.ts': '', 'b.md': '' },
        input: { path: '.' },
        output: {
          success: true,
          output: 'src/\nb.md',
          entries: [
            { name: 'src', type: 'directory' },
            { name: 'b.md', type: 'file' },
          ],
        },
      },
    ],
    async (params, ctx) => {
      const r = await runNative('dirigent/fs/ls', params, ctx);
      const entries = (r.entries as { path: string; type: string }[]).map((e) => ({
        ...e,
        name: e.path,
      }));
      const output = entries
        .map((e) => (e.type === 'directory' ? `${e.name}/` : e.name))
        .join('\n');
      return { success: true, ...r, entries, output };
    },
  ),
  ryeAlias(
    'rye/file-system/glob',
    'dirigent/fs/glob',
    'Finds files by glob',
    [
      {
        description: "RYE's glob: a name pattern at any depth, at most 100 files",
        files: { 'src/a.py': '', 'src/b/c.py': '', 'd.txt': '' },
        input: { pattern: '*.py' },
        output: {
          success: true,
          files: ['src/a.py', 'src/b/c.py'],
          count: 2,
          output: 'src/a.py\nsrc/b/c.py',
        },
      },
    ],
    async (params, ctx) => {
      const r = await runNative('dirigent/fs/glob', withParams(params, [], { limit: 100 }), ctx);
      return { success: true, ...r, output: (r.files as string[]).join('\n') };
    },
  ),
  ryeAlias(
    'rye/file-system/grep',
    'dirigent/fs/grep',
    'Searches files by regular expression',
    [
      {
        description: "RYE's grep: output lines are file:line:content",
        files: { 'a.py': 'import os\nprint(1)\n' },
        input: { pattern: 'print', include: '*.py' },
        output: { success: true, count: 1, output: 'a.py:2:print(1)' },
      },
    ],
    async (params, ctx) => {
      const r = await runNative(
        'dirigent/fs/grep',
        withParams(params, [], { max_matches: 100 }),
        ctx,
      );
      const matches = r.matches as { file: string; line: number; content: string }[];
      return {
        success: true,
        ...r,
        output: matches.map((m) => `${m.file}:${m.line}:${m.content}`).join('\n'),
      };
    },
  ),
  ...['rye/web/webfetch', 'rye/web/fetch/fetch'].map((id) =>
    ryeAlias(
      id,
      'dirigent/web/fetch',
      'Fetches a page as Markdown, text or HTML',
      [
        {
          description: "RYE's webfetch: the page is output",
          files: { '.ai/config/network.yaml': 'hosts: ["127.0.0.1"]\nprivate: ["127.0.0.1"]\n' },
          serve: { '/': { type: 'text/html', body: '<h1>Hi</h1>' } },
          input: { url: 'http://{server}/', format: 'markdown', timeout: 10 },
          output: { success: true, output: '# Hi', format: 'markdown' },
        },
      ],
      async (params, ctx) => {
        const r = await runNative('dirigent/web/fetch', params, ctx);
        return { success: true, ...r, output: r.content };
      },
    ),
  ),
];

/** RYE's write of one file: its result fields beside the native ones. */
async function writeOne(
  params: Record<string, unknown>,
  ctx: ToolContext,
): Promise<Record<string, unknown>> {
  const given = (params.file_path ?? params.path) as string | undefined;
  if (given === undefined) {
    throw DirigentError.fatal(
      ErrorCode.INVALID_PARAMS,
      'rye/file-system/write needs path (or file_path) and content, or files',
      {
        hint: 'Give path and content, or files: [{path, content}, …].',
      },
    );
  }
  const existed = await stat(await resolveInProject(ctx.projectDir, given)).then(
    () => true,
    () => false,
  );
  const r = await runNative('dirigent/fs/write', withParams(params, ['files']), ctx);
  const rel = relative(resolve(ctx.projectDir), r.path as string)
    .split(sep)
    .join('/');
  const bytes = r.bytes as number;
  return {
    success: true,
    ...r,
    file_path: rel,
    bytes_written: bytes,
    created: !existed,
    output: `${existed ? 'Wrote' : 'Created new file'} ${rel} (${bytes} bytes)`,
  };
}
