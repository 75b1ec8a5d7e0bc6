import { readFile } from 'node:fs/promises';
import { DirigentError, ErrorCode } from '../../errors/index.js';
import { abortError } from '../abort-error.js';
import { resolveInProject } from '../resolve-in-project.js';
import { type ToolDefinition } from '../tool-definition.js';

/** Encodings a file may be read with; binary files come back as base64 or hex. */
const ENCODINGS = ['utf8', 'utf-8', 'base64', 'hex', 'latin1', 'ascii', 'utf16le'] as const;

/**
 * `dirigent/fs/read`: reads a file of the project and resolves `{ path, content, size }`, where
 * `path` is absolute and `size` counts bytes. `path` is accepted as an alias of `file_path`
 * (RYE's name). Paths outside the project are refused with `PATH_OUTSIDE_PROJECT`; a missing file
 * fails with a fatal `FILE_NOT_FOUND`.
 */
export const fsReadTool: ToolDefinition = {
  itemId: 'dirigent/fs/read',
  description: 'Reads a file inside the project directory.',
  paramsSchema: {
    type: 'object',
    properties: {
      file_path: { type: 'string', minLength: 1 },
      path: { type: 'string', minLength: 1 },
      encoding: { type: 'string', enum: ENCODINGS, default: 'utf8' },
    },
    anyOf: [{ required: ['file_path'] }, { required: ['path'] }],
    additionalProperties: false,
  },
  async execute(params, ctx) {
    const given = (params.file_path ?? params.path) as string;
    const path = await resolveInProject(ctx.projectDir, given);
    let data: Buffer;
    try {
      data = await readFile(path, { signal: ctx.signal });
    } catch (err) {
      // An abort surfaces from fs as a plain AbortError; report it as the engine's own reason.
      if (ctx.signal.aborted) throw abortError(ctx.signal, `reading "${given}"`);
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        throw DirigentError.fatal(ErrorCode.FILE_NOT_FOUND, `file "${given}" does not exist`, {
          details: { path },
        });
      }
      throw err;
    }
    const encoding = params.encoding as (typeof ENCODINGS)[number];
    return { path, content: data.toString(encoding), size: data.length };
  },
};
