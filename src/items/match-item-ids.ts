/**
 * The item ids a glob matches in one space, for signing many items at once.
 */
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import picomatch from 'picomatch';
import { KIND_DIRS, KIND_EXTENSIONS, type ItemKind } from './item-kind.js';
import type { Space } from './space.js';

/** The item ids under `space`'s folder for `kind` that `pattern` matches, sorted. */
export async function matchItemIds(
  space: Space,
  kind: ItemKind,
  pattern: string,
): Promise<string[]> {
  const root = join(space.root, KIND_DIRS[kind]);
  const glob = pattern.includes('/') ? pattern : `**/${pattern}`;
  const isMatch = picomatch(glob, { dot: false });
  const extensions = KIND_EXTENSIONS[kind];
  const ids = new Set<string>();
  for (const file of await filesUnder(root)) {
    const rel = relative(root, file).split(sep).join('/');
    if (kind === 'tool' && rel === 'enabled.json') continue;
    const ext = extensions.find((e) => rel.endsWith(e));
    if (ext === undefined) continue;
    const itemId = rel.slice(0, -ext.length);
    if (isMatch(itemId)) ids.add(itemId);
  }
  return [...ids].sort();
}

/** The files under `dir`, skipping names that start with `.` or `_`; none when it is absent. */
async function filesUnder(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const files: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith('.') || entry.name.startsWith('_')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await filesUnder(path)));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}
