import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { abortError } from '../abort-error.js';
import { resolveInProject } from '../resolve-in-project.js';
import { type ToolDefinition } from '../tool-definition.js';
import { fileNotFound } from '../../errors/file-errors.js';

/**
 * `dirigent/fs/write`: writes (or appends) text to a file of the project and resolves
 * `{ path, bytes }`, where `path` is absolute and `bytes` counts the UTF-8 bytes written. Missing
 * parent directories are created unless `create_dirs` is false. `path` is accepted as an alias of
 * `file_path`. Paths outside the project are refused with `PATH_OUTSIDE_PROJECT`, and paths in its
 * `.ai/`, `.dirigent/` and `.git/` folders with `PATH_PROTECTED`.
 */
export const fsWriteTool: ToolDefinition = {
  itemId: 'dirigent/fs/write',
  description: 'Writes or appends text to a file inside the project directory.',
  paramsSchema: {
    type: 'object',
    properties: {
      file_path: { type: 'string', minLength: 1 },
      path: { type: 'string', minLength: 1 },
      content: { type: 'string' },
      create_dirs: { type: 'boolean', default: true },
      append: { type: 'boolean', default: false },
    },
    required: ['content'],
    anyOf: [{ required: ['file_path'] }, { required: ['path'] }],
    additionalProperties: false,
  },
  examples: [
    {
      description: 'writes a file, creating its folder',
      input: { path: 'out/note.txt', content: 'héllo' },
      output: { bytes: 6 },
    },
    {
      description: "the project's .ai/ folder is not for tools to write",
      input: { path: '.ai/tools/evil.py', content: '' },
      error: { code: 'PATH_PROTECTED', retryable: false },
    },
  ],
  async execute(params, ctx) {
    const given = (params.file_path ?? params.path) as string;
    const content = params.content as string;
    const path = await resolveInProject(ctx.projectDir, given, 'write');
    if (params.create_dirs === true) await mkdir(dirname(path), { recursive: true });
    try {
      if (params.append === true) await appendFile(path, content, 'utf8');
      else await writeFile(path, content, { encoding: 'utf8', signal: ctx.signal });
    } catch (err) {
      // An abort surfaces from fs as a plain AbortError; report it as the engine's own reason.
      if (ctx.signal.aborted) throw abortError(ctx.signal, `writing "${given}"`);
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        throw fileNotFound(`The folder of "${given}"`, {
          path,
          hint: 'Set create_dirs to true to create it.',
        });
      }
      throw err;
    }
    return { path, bytes: Buffer.byteLength(content, 'utf8') };
  },
};
