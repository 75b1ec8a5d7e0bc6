import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root folder. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built CLI, as its bin runs it (`npm test` builds before the tests run). */
export const CLI_MAIN = join(REPO_ROOT, 'dist', 'cli', 'main.js');
/** The CLI as tsc built it, module by module, before it is bundled (see `scripts/bundle.mjs`). */
export const CLI_SOURCES_MAIN = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
/** The example directives. */
export const DIRECTIVES = join(REPO_ROOT, 'directives');
