/**
 * The checks every kind of item shares: the name, category and version it declares against where
 * its file is.
 */
import { basename, extname } from 'node:path';
import type { SourceLocation } from '../errors/source-location.js';
import type { ItemIssue } from './item-issue.js';
import { normalizeLineEndings } from './signing/content-hash.js';

/** Semantic versioning: `1.2.0`, with an optional pre-release and build (`1.2.0-rc.1+b5`). */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/** What `validateItem` checks of the fields an item declares. */
export interface Declared {
  name?: unknown;
  /** Another name the item may declare: a knowledge entry may be named by its item id. */
  alsoNamed?: string;
  category?: unknown;
  /** Whether a category that is not the folder is only a warning (knowledge). */
  categoryIsTopic?: boolean;
  version?: unknown;
  /** Whether the format requires a version (RYE's tools, its XML directives). */
  versionRequired?: boolean;
}

/**
 * The problems of the fields `declared` by item `itemId` (file `file`, text `text`): a name that
 * is not the file's, a category that is not its folder, a version that is not semver or missing
 * where the format requires one.
 */
export function checkDeclared(
  declared: Declared,
  itemId: string,
  file: string,
  text: string,
): ItemIssue[] {
  const issues: ItemIssue[] = [];
  const at = (field: string) => fieldLocation(file, text, field);
  const stem = basename(file, extname(file));
  const slash = itemId.lastIndexOf('/');
  const folder = slash === -1 ? '' : itemId.slice(0, slash);
  const { name, category, version } = declared;
  if (typeof name === 'string' && name !== '' && name !== stem && name !== declared.alsoNamed) {
    issues.push({
      message: `It is named "${name}" but its file is "${basename(file)}".`,
      location: at('name'),
      hint: `Rename one: name "${stem}", or the file ${name}${extname(file)}.`,
    });
  }
  if (category !== undefined && category !== null) {
    const given = typeof category === 'string' ? category.replace(/^\/+|\/+$/g, '') : category;
    if (given !== folder) {
      issues.push({
        message: `Its category "${String(category)}" is not its folder "${folder}" (item ${itemId}).`,
        location: at('category'),
        hint:
          folder === ''
            ? 'Remove the category, or move the file into a folder of that name.'
            : `Write category "${folder}", or move the file into the folder of its category.`,
        ...(declared.categoryIsTopic && { severity: 'warning' as const }),
      });
    }
  }
  if (version === undefined || version === null || version === '') {
    if (declared.versionRequired) {
      issues.push({
        message: 'It declares no version.',
        location: { file, line: 1, column: 1 },
        hint: 'Add a semantic version such as "1.0.0".',
      });
    }
  } else if (typeof version !== 'string' || !SEMVER.test(version)) {
    issues.push({
      message: `Its version ${JSON.stringify(version)} is not a semantic version.`,
      location: at('version'),
      hint: 'Write MAJOR.MINOR.PATCH as a string, e.g. version: "1.2.0".',
    });
  }
  return issues;
}

/**
 * Where `field` is declared in `text`: the first line that declares it in one of the notations
 * items use (YAML or front matter `field:`, RYE's `# field:` header, Python `__field__ =` or
 * `field =`, TOML `field =`, JSON `"field":`, an XML `field="…"` attribute of `<directive>` or a
 * `<field>` element); line 1 when none does. Top-level keys only for YAML and Python (no
 * indentation), so an input named `name` is not taken for the item's name.
 */
export function fieldLocation(file: string, text: string, field: string): SourceLocation {
  const patterns = [
    new RegExp(`^(?:#\\s*)?(${field})\\s*:`),
    new RegExp(`^(?:__)?(${field})(?:__)?\\s*=`),
    new RegExp(`"(${field})"\\s*:`),
    new RegExp(`<directive\\b[^>]*\\s(${field})\\s*=`),
    new RegExp(`<(${field})>`),
  ];
  const lines = normalizeLineEndings(text).split('\n');
  for (const [index, line] of lines.entries()) {
    for (const pattern of patterns) {
      const m = pattern.exec(line);
      if (m) return { file, line: index + 1, column: m.index + m[0].indexOf(m[1]!) + 1 };
    }
  }
  return { file, line: 1, column: 1 };
}

/** Whether `value` is a string with more than blanks. */
export function nonEmpty(value: unknown): boolean {
  return typeof value === 'string' && value.trim() !== '';
}
