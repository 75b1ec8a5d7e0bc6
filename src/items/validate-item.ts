/**
 * What an item must be before it is signed (RYE reference §5.6 step 5): it reads as its kind, its
 * declared name and category agree with where the file is, its version is semver, and it says
 * what it is. RYE's own files validate, in its older and its current layouts; fields Dirigent
 * does not know are left alone.
 */
import { diagnosticsOf } from '../directive/diagnostics.js';
import { DirigentError } from '../errors/dirigent-error.js';
import type { SourceLocation } from '../errors/source-location.js';
import { checkDeclared, type Declared } from './check-declared.js';
import type { ItemIssue } from './item-issue.js';
import type { ItemKind } from './item-kind.js';
import { readDeclaredDirective, readDeclaredKnowledge } from './read-declared.js';
import { readDeclaredTool } from './read-declared-tool.js';

export type { ItemIssue } from './item-issue.js';

/**
 * The problems that keep `file` (item `itemId` of `kind`, text `text`) from being signed; none
 * when it may be.
 *
 * - the declared name, if the format has one, is the file's name without extension (a knowledge
 *   entry may also be named by its item id, as RYE's current entries are);
 * - the declared category, if any, is the item id's folder (`rye/bash/bash` → `rye/bash`); for
 *   knowledge a different category is a warning only, since RYE's own signed entries file their
 *   categories by topic (`ryeos/core` for `ryeos/core/node/http-api`);
 * - the version, where declared, is semver; RYE's Python and JS tools (`__version__`, the
 *   `# ryeos-tool:` header) and its XML directives must declare one;
 * - a directive (or a graph) parses and compiles under the project's policy;
 * - a tool reads as a tool (Python, YAML, JS/TS; RYE's `# ryeos-tool:` header; JSON, TOML and
 *   shell files only parse) and has a description. A YAML tool with `executor_id: null` that is
 *   not a primitive (RYE's terminal executors) is read, not refused: RYE signs such files;
 * - knowledge front matter parses, and the entry has a description or a title (`title`, or a
 *   `# heading`).
 *
 * @param projectDir the project, whose policy directives compile under and whose Python reads
 *   Python tools.
 * @throws DirigentError only when the project itself is broken (`INVALID_CONFIG`).
 */
export async function validateItem(
  kind: ItemKind,
  itemId: string,
  file: string,
  text: string,
  projectDir: string,
): Promise<ItemIssue[]> {
  const issues: ItemIssue[] = [];
  const at: SourceLocation = { file, line: 1, column: 1 };
  let declared: Declared | undefined;
  try {
    declared =
      kind === 'directive'
        ? readDeclaredDirective(file, text, projectDir)
        : kind === 'knowledge'
          ? readDeclaredKnowledge(itemId, file, text, at, issues)
          : await readDeclaredTool(itemId, file, text, projectDir, at, issues);
  } catch (err) {
    if (!(err instanceof DirigentError)) throw err;
    for (const d of diagnosticsOf(err)) {
      if (d.severity !== 'error') continue;
      issues.push({
        message: d.message,
        ...(d.loc && { location: d.loc }),
        ...(d.hint && { hint: d.hint }),
      });
    }
  }
  if (declared !== undefined) issues.push(...checkDeclared(declared, itemId, file, text));
  return issues;
}
