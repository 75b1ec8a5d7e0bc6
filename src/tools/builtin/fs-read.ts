import { open, readFile, stat } from 'node:fs/promises';
import { DirigentError, ErrorCode } from '../../errors/index.js';
import { abortError } from '../abort-error.js';
import { resolveInProject } from '../resolve-in-project.js';
import { BINARY_SNIFF_BYTES } from '../text-file-reader.js';
import { type ToolDefinition } from '../tool-definition.js';
import type { ToolExample } from '../tool-example.js';
import { binaryFile, fileNotFound, fileTooLarge, notAFile } from '../../errors/file-errors.js';

/** Encodings a file may be read with; binary files come back as base64 or hex. */
const ENCODINGS = ['utf8', 'utf-8', 'base64', 'hex', 'latin1', 'ascii', 'utf16le'] as const;
type Encoding = (typeof ENCODINGS)[number];
/** Encodings whose content has lines; the others are data, read as bytes. */
const TEXT = new Set<Encoding>(['utf8', 'utf-8', 'latin1', 'ascii', 'utf16le']);
/** Text files are read whole to find their lines; beyond this size, a search suits better. */
const MAX_TEXT_FILE = 64 * 1024 * 1024;

const EXAMPLES: ToolExample[] = [
  {
    description: 'a whole file',
    files: { 'notes.txt': 'one\ntwo\nthree\n' },
    input: { path: 'notes.txt' },
    output: {
      content: 'one\ntwo\nthree\n',
      size: 14,
      total_lines: 3,
      line_count: 3,
      truncated: false,
    },
  },
  {
    description: 'two lines from the second, numbered; next_offset says where the rest starts',
    files: { 'notes.txt': 'one\ntwo\nthree\nfour\n' },
    input: { path: 'notes.txt', offset: 2, limit: 2, line_numbers: true },
    output: {
      content: '     2\ttwo\n     3\tthree\n',
      offset: 2,
      line_count: 2,
      total_lines: 4,
      truncated: true,
      next_offset: 4,
    },
  },
  {
    description: 'a binary file is refused as text; encoding base64 reads it',
    files: { 'blob.bin': 'a\u0000b' },
    input: { path: 'blob.bin' },
    error: { code: 'BINARY_FILE', retryable: false },
  },
];

/**
 * `dirigent/fs/read`: reads a file of the project and resolves `{ path, content, size }`, where
 * `path` is absolute and `size` counts bytes. `path` is accepted as an alias of `file_path`
 * (RYE's name). In a text encoding, `offset` (1-based line) and `limit` (lines) choose a line
 * range and `line_numbers` prefixes each line with its number, as `cat -n` does; the result adds
 * `offset`, `line_count`, `total_lines`, and `truncated` with `next_offset` when lines are left
 * after the range or past `max_chars`. A UTF-8 file with a NUL byte in its first 8,000 bytes is
 * refused (`BINARY_FILE`: read it as base64). Paths outside the project (symbolic links followed)
 * are refused with `PATH_OUTSIDE_PROJECT`; a missing file is a fatal `FILE_NOT_FOUND`.
 */
export const fsReadTool: ToolDefinition = {
  itemId: 'dirigent/fs/read',
  description: 'Reads a project file, or a range of its lines.',
  paramsSchema: {
    type: 'object',
    properties: {
      file_path: { type: 'string', minLength: 1 },
      path: { type: 'string', minLength: 1, description: 'Alias of file_path (RYE).' },
      encoding: { type: 'string', enum: ENCODINGS, default: 'utf8' },
      offset: { type: 'integer', minimum: 1, description: 'First line to read (1-based).' },
      limit: { type: 'integer', minimum: 1, description: 'Lines to read at most.' },
      line_numbers: { type: 'boolean', default: false, description: 'Prefix lines with numbers.' },
      max_chars: {
        type: 'integer',
        minimum: 1,
        maximum: 8388608,
        default: 1048576,
        description: 'Content returned at most (characters; bytes for base64 and hex).',
      },
    },
    anyOf: [{ required: ['file_path'] }, { required: ['path'] }],
    additionalProperties: false,
  },
  examples: EXAMPLES,
  async execute(params, ctx) {
    const given = (params.file_path ?? params.path) as string;
    const path = await resolveInProject(ctx.projectDir, given);
    const encoding = params.encoding as Encoding;
    const maxChars = params.max_chars as number;
    const stats = await stat(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') {
        throw fileNotFound(`File "${given}"`, {
          path,
          hint: 'Set path to an existing file of the project (dirigent/fs/glob finds files).',
        });
      }
      throw err;
    });
    if (stats.isDirectory()) {
      throw notAFile(given, { path, hint: 'Set path to a file; dirigent/fs/ls lists a folder.' });
    }
    if (!TEXT.has(encoding)) {
      const ranged = ['offset', 'limit', 'line_numbers'].filter(
        (k) => params[k] !== undefined && params[k] !== false,
      );
      if (ranged.length > 0) {
        throw DirigentError.fatal(
          ErrorCode.INVALID_PARAMS,
          `${ranged.join(', ')} need a text encoding, not ${encoding}`,
          {
            hint: `Leave out ${ranged.join(', ')}, or set encoding to utf8.`,
          },
        );
      }
      const data = await readBytes(path, stats.size, maxChars, ctx.signal, given);
      return {
        path,
        content: data.toString(encoding),
        size: stats.size,
        truncated: stats.size > data.length,
      };
    }
    if (stats.size > MAX_TEXT_FILE) {
      throw fileTooLarge(given, stats.size, MAX_TEXT_FILE, 'a text read', {
        path,
        hint: 'Find the lines you need with dirigent/fs/grep, or read it as base64 with max_chars.',
      });
    }
    const data = await readBytes(path, stats.size, MAX_TEXT_FILE, ctx.signal, given);
    if (
      (encoding === 'utf8' || encoding === 'utf-8') &&
      data.subarray(0, BINARY_SNIFF_BYTES).includes(0)
    ) {
      throw binaryFile(given, 'utf8 reads text', {
        path,
        hint: 'Set encoding to base64 (or hex) to read it as data.',
      });
    }
    return { path, size: data.length, ...lineRange(data.toString(encoding), params, maxChars) };
  },
};

/**
 * Up to `max` bytes of the file (whose size was `size` when stat'ed), the abort of `signal`
 * stopping the read. A file within `max` is read in one go; a larger one in chunks up to `max`.
 */
async function readBytes(
  path: string,
  size: number,
  max: number,
  signal: AbortSignal,
  given: string,
): Promise<Buffer> {
  try {
    if (size < max) {
      const data = await readFile(path, { signal });
      return data.length > max ? data.subarray(0, max) : data;
    }
    const handle = await open(path, 'r');
    try {
      const chunks: Buffer[] = [];
      let total = 0;
      while (total < max) {
        if (signal.aborted) throw abortError(signal, `reading "${given}"`);
        const chunk = Buffer.allocUnsafe(Math.min(max - total, 1024 * 1024));
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
        if (bytesRead === 0) break;
        chunks.push(bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead));
        total += bytesRead;
      }
      return Buffer.concat(chunks, total);
    } finally {
      await handle.close();
    }
  } catch (err) {
    // An abort surfaces from fs as a plain AbortError; report it as the engine's own reason.
    if (signal.aborted) throw abortError(signal, `reading "${given}"`);
    throw err;
  }
}

/** The lines of `text` that `params` ask for, within `maxChars`, and where they lie. */
function lineRange(text: string, params: Record<string, unknown>, maxChars: number) {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1 && i + 1 < text.length; i = text.indexOf('\n', i + 1))
    starts.push(i + 1);
  const total = text.length === 0 ? 0 : starts.length;
  const offset = (params.offset as number | undefined) ?? 1;
  if (offset > Math.max(total, 1)) {
    throw DirigentError.fatal(
      ErrorCode.LINE_OUT_OF_RANGE,
      `offset ${offset} is past the end of the file, which has ${total} lines`,
      {
        hint: `Set offset to a line from 1 to ${Math.max(total, 1)}.`,
        details: { offset, total_lines: total },
      },
    );
  }
  const limit = (params.limit as number | undefined) ?? total;
  const numbered = params.line_numbers === true;
  const last = Math.min(total, offset - 1 + limit); // 1-based, inclusive
  let content = '';
  let line = offset;
  for (; line <= last; line++) {
    const start = starts[line - 1]!;
    const piece =
      (numbered ? `${String(line).padStart(6)}\t` : '') +
      text.slice(start, starts[line] ?? text.length);
    if (content.length + piece.length > maxChars) {
      // Not even one whole line fits: the first line is cut, and the next read starts after it.
      if (content === '') {
        content = piece.slice(0, maxChars);
        line++;
      }
      break;
    }
    content += piece;
  }
  const truncated = line <= total;
  return {
    content,
    offset,
    line_count: line - offset,
    total_lines: total,
    truncated,
    ...(truncated && { next_offset: line }),
  };
}
