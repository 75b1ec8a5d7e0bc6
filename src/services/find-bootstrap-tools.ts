/**
 * Finds the bootstrap tools of a project: every tool under `<space>/tools/` of its spaces (project,
 * user, system) that declares `bootstrap` enabled with mode `once` or `continuous`. An item id
 * found in several spaces is resolved as a call would resolve it (the highest space wins), so a
 * project's tool shadows, and can switch off, a lower space's bootstrap tool of the same id.
 *
 * Tool files are read without running them, and only those whose text mentions `bootstrap` at all
 * (so a worker does not start a Python process per Python tool of every space).
 */
import type { Dirent } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';
import { DirigentError } from '../errors/dirigent-error.js';
import { itemHash } from '../items/item-hash.js';
import { checkItemId, type ItemResolver } from '../items/item-resolver.js';
import { readToolItem } from '../items/read-tool-item.js';
import type { ToolItem } from '../items/tool-item.js';
import { checkToolEnabled } from '../items/tool-registry.js';
import type { BootstrapSpec } from './bootstrap-spec.js';
import type { BootstrapTool } from './bootstrap-tool.js';

/** The formats a tool can declare `bootstrap` in. */
const TOOL_EXTENSIONS = new Set(['.py', '.yaml', '.yml', '.ts', '.mjs', '.js', '.cjs']);
const MENTIONS_BOOTSTRAP = /bootstrap/i;

/** What {@link findBootstrapTools} found. */
export interface FoundBootstrapTools {
  /** The tools to start, by item id. */
  tools: BootstrapTool[];
  /**
   * Tools that mention `bootstrap` but could not be read (an invalid declaration, a file that
   * does not parse) or are disabled in their space's registry: each error names the tool.
   */
  problems: { itemId: string; error: DirigentError }[];
}

/** Finds the bootstrap tools of the spaces `resolver` resolves in; see the module comment. */
export async function findBootstrapTools(
  resolver: ItemResolver,
  projectDir: string,
): Promise<FoundBootstrapTools> {
  const candidates = new Set<string>();
  for (const space of resolver.spaces) {
    const dir = join(space.root, 'tools');
    for (const file of await toolFiles(dir)) {
      const itemId = relative(dir, file).slice(0, -extname(file).length).split(sep).join('/');
      if (!validItemId(itemId) || candidates.has(itemId)) continue;
      if (await mentionsBootstrap(file)) candidates.add(itemId);
    }
  }
  const tools: BootstrapTool[] = [];
  const problems: FoundBootstrapTools['problems'] = [];
  for (const itemId of [...candidates].sort()) {
    try {
      const resolution = await resolver.resolve('tool', itemId);
      if (!TOOL_EXTENSIONS.has(extname(resolution.file))) continue;
      if (!(await mentionsBootstrap(resolution.file))) continue; // shadowed by one without it
      const spec = bootstrapOf(await readToolItem(resolution, projectDir));
      if (spec === undefined || !spec.enabled || spec.mode === 'disabled') continue;
      const space = resolver.spaces.find((s) => s.name === resolution.space);
      if (space !== undefined) await checkToolEnabled(space.root, itemId);
      tools.push({
        itemId,
        file: resolution.file,
        space: resolution.space,
        hash: await itemHash(resolution.file),
        spec: spec as BootstrapTool['spec'],
      });
    } catch (err) {
      problems.push({ itemId, error: DirigentError.from(err) });
    }
  }
  return { tools, problems };
}

/**
 * A tool's checked declaration: the YAML reader sets {@link ToolItem.bootstrap}; the Python and
 * JS/TS readers put it in their metadata, the item's `source`.
 */
function bootstrapOf(item: ToolItem): BootstrapSpec | undefined {
  if (item.bootstrap !== undefined) return item.bootstrap;
  if (item.format === 'yaml') return undefined;
  const source = item.source as { bootstrap?: BootstrapSpec } | undefined;
  return source?.bootstrap;
}

/** Files with a tool's extension under `dir`, at any depth; none when `dir` does not exist. */
async function toolFiles(dir: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const files: string[] = [];
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) files.push(...(await toolFiles(path)));
    else if ((e.isFile() || e.isSymbolicLink()) && TOOL_EXTENSIONS.has(extname(e.name)))
      files.push(path);
  }
  return files;
}

async function mentionsBootstrap(file: string): Promise<boolean> {
  try {
    return MENTIONS_BOOTSTRAP.test(await readFile(file, 'utf8'));
  } catch {
    return false;
  }
}

function validItemId(itemId: string): boolean {
  try {
    checkItemId(itemId);
    return true;
  } catch {
    return false;
  }
}
