import { readFile, stat } from 'node:fs/promises';
import { contentHash } from '../directive/parse-directive.js';

/** Hashes by file, kept while the file's size and modification time stay the same. */
const known = new Map<string, { mtimeMs: number; size: number; hash: string }>();
const LIMIT = 2000;

/**
 * The content hash of an item's file (as `contentHash` of its text): what a run's submitter and a
 * worker compare to know they mean the same tool. A `stat` per call; the file is read again only
 * when it changed.
 */
export async function itemHash(file: string): Promise<string> {
  const st = await stat(file);
  const hit = known.get(file);
  if (hit !== undefined && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.hash;
  const hash = contentHash(await readFile(file, 'utf8'));
  if (known.size >= LIMIT) known.delete(known.keys().next().value!);
  known.set(file, { mtimeMs: st.mtimeMs, size: st.size, hash });
  return hash;
}
