/**
 * What a directive (or graph) and a knowledge entry declare, read for validation.
 */
import { basename } from 'node:path';
import { DirectiveLoader } from '../engine/directive-loader.js';
import type { SourceLocation } from '../errors/source-location.js';
import { fieldLocation, nonEmpty, type Declared } from './check-declared.js';
import type { ItemIssue } from './item-issue.js';
import { parseKnowledge } from './knowledge-item.js';

/** A directive or graph, compiled as the engine would (throws its diagnostics). */
export function readDeclaredDirective(file: string, text: string, projectDir: string): Declared {
  const loaded = new DirectiveLoader(projectDir, false).fromText(file, text);
  const d = loaded.compiled.directive;
  const xml = d.source.format === 'directive' && /^```xml\s*$/m.test(text);
  return {
    name: d.name,
    category: d.category,
    version: d.version,
    versionRequired: xml,
  };
}

/**
 * A knowledge entry's front matter; an entry with neither description nor title, or whose `id`
 * is not its item id, adds to `issues`.
 */
export function readDeclaredKnowledge(
  itemId: string,
  file: string,
  text: string,
  at: SourceLocation,
  issues: ItemIssue[],
): Declared {
  const entry = parseKnowledge(text, file);
  const meta = entry.metadata;
  const heading = /^#\s+\S/m.test(entry.content);
  if (!nonEmpty(meta.description) && !nonEmpty(meta.title) && !heading) {
    issues.push({
      message: 'It has no description and no title.',
      location: at,
      hint: 'Add description: "…" (or title: "…") to its front matter, or a "# Title" line.',
    });
  }
  // RYE's current layout names an entry by its item id.
  if (typeof meta.id === 'string' && meta.id !== itemId && meta.id !== basename(itemId)) {
    issues.push({
      message: `Its id "${meta.id}" is not its item id "${itemId}".`,
      location: fieldLocation(file, text, 'id'),
      hint: `Write id: ${itemId}, or move the file to match its id.`,
    });
  }
  return {
    name: meta.name,
    alsoNamed: itemId,
    category: meta.category,
    categoryIsTopic: true,
    version: meta.version,
  };
}
