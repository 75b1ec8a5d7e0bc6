import { homedir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../package-info.js';

/** Where items live. Resolution order: project, then user, then system. */
export type SpaceName = 'project' | 'user' | 'system';

/** A space and its `.ai/` folder. */
export interface Space {
  name: SpaceName;
  /** The `.ai/` folder (absolute). */
  root: string;
}

/** The system space shipped inside the package: `<package>/system/.ai`. */
export const SYSTEM_SPACE_ROOT = join(PACKAGE_ROOT, 'system', '.ai');

/**
 * The three spaces of a project: `<project>/.ai`, the user's (`$DIRIGENT_USER_SPACE`, which
 * stands for `~/.ai` itself), and the system space shipped with Dirigent.
 */
export function defaultSpaces(
  projectDir: string,
  env: Record<string, string | undefined> = process.env,
): Space[] {
  return [
    { name: 'project', root: join(projectDir, '.ai') },
    { name: 'user', root: env.DIRIGENT_USER_SPACE || join(homedir(), '.ai') },
    { name: 'system', root: SYSTEM_SPACE_ROOT },
  ];
}

/**
 * The spaces an item of `space` may resolve further items from (its runtime, say): never upward,
 * so a system tool can never be taken over by a project's or a user's runtime.
 */
export function spacesBelow(spaces: readonly Space[], space: SpaceName): Space[] {
  const order: SpaceName[] = ['project', 'user', 'system'];
  return spaces.filter((s) => order.indexOf(s.name) >= order.indexOf(space));
}
