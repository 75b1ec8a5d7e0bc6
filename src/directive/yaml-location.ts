import { isMap, isScalar, type Document, type Node as YamlNode } from 'yaml';
import type { SourceLocation } from '../errors/source-location.js';
import type { LineIndex } from './line-index.js';

/**
 * Where the key at `path` is written in a YAML document (`['config', 'nodes', 'a']`), or the
 * deepest of its parents that exists; for errors that point at the line to fix.
 */
export function locateYamlKey(
  doc: Document,
  path: readonly string[],
  lines: LineIndex,
): SourceLocation {
  let node: unknown = doc.contents;
  let offset = 0;
  for (const key of path) {
    if (!isMap(node)) break;
    const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
    if (!pair) break;
    offset = (pair.key as YamlNode).range?.[0] ?? offset;
    node = pair.value;
  }
  return lines.at(offset);
}
