import type { Document, Node as YamlNode } from 'yaml';
import type * as Yaml from 'yaml';
import type { SourceLocation } from '../errors/source-location.js';
import type { LineIndex } from './line-index.js';
import { lazyPackage } from '../lazy-package.js';

/** The YAML package (the caller that holds a `Document` has loaded it already). */
const yaml = lazyPackage<typeof Yaml>('yaml');

/**
 * Where the key at `path` is written in a YAML document (`['config', 'nodes', 'a']`), or the
 * deepest of its parents that exists; for errors that point at the line to fix.
 */
export function locateYamlKey(
  doc: Document,
  path: readonly string[],
  lines: LineIndex,
): SourceLocation {
  const { isMap, isScalar } = yaml();
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
