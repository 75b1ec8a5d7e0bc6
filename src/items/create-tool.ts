/**
 * Writes and registers a new tool from source (seed 002's flow): the source is validated first
 * (read without running it; a Python module is also imported once in a separate process, so that
 * an error at load time comes back with its traceback), then written to
 * `<space>/tools/<item_id><ext>`, its executor chain checked, and registered in the space's
 * `tools/enabled.json`. The resolver drops its cache, so the next call finds the tool.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { buildChain } from '../runtimes/build-chain.js';
import { resolvePython } from '../runtimes/python-interpreter.js';
import { stderrTail } from '../runtimes/stderr-tail.js';
import { checkItemId, type ItemResolver } from './item-resolver.js';
import { KIND_EXTENSIONS } from './item-kind.js';
import type { PythonToolMetadata } from './python-tool-metadata.js';
import { readToolItem } from './read-tool-item.js';
import type { SpaceName } from './space.js';
import type { ChainLink } from './tool-item.js';
import { registerTool } from './tool-registry.js';

/** Extensions `createTool` accepts. */
export const CREATABLE_EXTENSIONS = ['.py', '.yaml', '.yml', '.ts', '.mjs', '.js'] as const;

/** What to create. */
export interface CreateToolRequest {
  itemId: string;
  source: string;
  /** The file's extension, e.g. `.py`. */
  extension: string;
  /** The space to write into (default `project`). */
  space?: SpaceName;
  /** Replace a tool the space already has. */
  force?: boolean;
  projectDir: string;
}

/** What was created. */
export interface CreatedTool {
  itemId: string;
  file: string;
  space: SpaceName;
  sha256: string;
  chain: ChainLink[];
}

const IMPORT_CHECK = String.raw`
import importlib.util, sys
spec = importlib.util.spec_from_file_location("dirigent_new_tool", sys.argv[1])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
`;
import { ignoreMissing } from '../errors/ignore-expected.js';

/** Validates, writes and registers a tool; throws `INVALID_TOOL`, `TOOL_EXISTS` or a chain error. */
export async function createTool(
  resolver: ItemResolver,
  request: CreateToolRequest,
): Promise<CreatedTool> {
  const { itemId, extension } = request;
  checkItemId(itemId);
  if (!(CREATABLE_EXTENSIONS as readonly string[]).includes(extension)) {
    throw DirigentError.fatal(
      ErrorCode.INVALID_TOOL,
      `Cannot create a tool from a ${extension || 'extensionless'} file.`,
      {
        hint: `Tools are written in ${CREATABLE_EXTENSIONS.join(', ')}.`,
      },
    );
  }
  const spaceName = request.space ?? 'project';
  const space = resolver.spaces.find((s) => s.name === spaceName);
  if (space === undefined || spaceName === 'system') {
    throw DirigentError.fatal(
      ErrorCode.INVALID_TOOL,
      `Tools are created in the project or user space, not "${spaceName}".`,
      {
        hint: 'Use --space project (the default) or --space user.',
      },
    );
  }
  const target = join(space.root, 'tools', ...itemId.split('/')) + extension;
  const existing = await existingFiles(target.slice(0, -extension.length));
  if (existing.length > 0 && request.force !== true) {
    throw DirigentError.fatal(
      ErrorCode.TOOL_EXISTS,
      `The ${spaceName} space already has tool "${itemId}" (${existing.join(', ')}).`,
      {
        hint: 'Pass --force to replace it, or choose another item id.',
        details: { itemId, files: existing },
      },
    );
  }
  await validateSource(request, spaceName);
  await mkdir(dirname(target), { recursive: true });
  const tmp = `${target}.${process.pid}.tmp`;
  await writeFile(tmp, request.source);
  for (const old of existing) if (old !== target) await rm(old, { force: true });
  await rename(tmp, target);
  resolver.invalidate();
  let chain: ChainLink[];
  try {
    chain = await buildChain(resolver, itemId, (r) => readToolItem(r, request.projectDir));
  } catch (err) {
    await rm(target, { force: true });
    resolver.invalidate();
    throw err;
  }
  const sha256 = createHash('sha256').update(request.source).digest('hex');
  await registerTool(space.root, itemId, {
    file: relative(join(space.root, 'tools'), target),
    sha256,
    registered_at: new Date().toISOString(),
    enabled: true,
  });
  return { itemId, file: target, space: spaceName, sha256, chain };
}

/** Reads the source in a scratch space; Python modules are also imported once. */
async function validateSource(request: CreateToolRequest, space: SpaceName): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), 'dirigent-new-tool-'));
  try {
    const file = join(scratch, basename(request.itemId) + request.extension);
    await writeFile(file, request.source);
    const item = await readToolItem(
      { kind: 'tool', itemId: request.itemId, file, space, shadowed: [], alsoFound: [] },
      request.projectDir,
    );
    if (item.format !== 'python') return;
    const meta = item.source as PythonToolMetadata;
    const name = basename(request.itemId);
    if (meta.format === 'seed' && meta.name !== name) {
      throw DirigentError.fatal(
        ErrorCode.INVALID_TOOL,
        `The tool's name is "${meta.name ?? ''}" but its item id ends in "${name}".`,
        {
          hint: `Set name = "${name}" (it must match the file name).`,
        },
      );
    }
    await importCheck(await resolvePython(request.projectDir), file, request.projectDir);
  } catch (err) {
    throw relocate(err, request.itemId);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

function importCheck(python: string, file: string, cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      python,
      ['-c', IMPORT_CHECK, file],
      { cwd, timeout: 15_000 },
      (err, _stdout, stderr) => {
        if (!err) return resolve();
        reject(
          DirigentError.fatal(
            ErrorCode.INVALID_TOOL,
            `The tool's module fails to load:\n${stderrTail(stderr, 20) || err.message}`,
            {
              hint: 'Fix the error the traceback shows; nothing was written.',
            },
          ),
        );
      },
    );
  });
}

/** Errors about the scratch copy, told about the tool being created. */
function relocate(err: unknown, itemId: string): unknown {
  const e = DirigentError.from(err);
  if (e.location === undefined) return err;
  return new DirigentError(e.code, `${e.message.replace(/\S*dirigent-new-tool-\S*/g, itemId)}`, {
    retryable: e.retryable,
    location: { ...e.location, file: `<source of ${itemId}>` },
    ...(e.hint !== undefined && { hint: e.hint }),
    ...(e.details !== undefined && { details: e.details }),
  });
}

async function existingFiles(stem: string): Promise<string[]> {
  const names = (await readdir(dirname(stem)).catch(ignoreMissing)) ?? [];
  return KIND_EXTENSIONS.tool
    .filter((ext) => names.includes(basename(stem) + ext))
    .map((ext) => stem + ext);
}
