/**
 * Whether a project requires signed items, by its policy and its environment.
 */
import { dirname } from 'node:path';
import type { Space } from '../items/space.js';
import { loadProjectPolicy } from '../policy/project-policy.js';

/**
 * Whether the project of `spaces` (the folder holding its project space's `.ai/`) requires
 * signatures, by its policy and `env`; `false` when there is no project space. Throws
 * `INVALID_CONFIG` for a malformed `.ai/config/dirigent.yaml`.
 */
export function projectRequiresSignatures(
  spaces: readonly Space[],
  env: Record<string, string | undefined>,
): boolean {
  const project = spaces.find((s) => s.name === 'project');
  return project !== undefined && loadProjectPolicy(dirname(project.root), env).requireSignatures;
}
